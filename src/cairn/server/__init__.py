"""``cairn serve``: the provider contract as a JSON HTTP API, with token auth per tenant.

``app`` builds the FastAPI app over one engine; ``auth`` keeps the tokens' hashes;
``metrics`` and ``logs`` are what an operator watches; ``openapi`` describes the API from
the contract's models; ``run`` is the composition root that opens the engine and runs
uvicorn. The server is an interface like the CLI: it reaches the engine only through a
provider.
"""
