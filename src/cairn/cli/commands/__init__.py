"""The commands of the cairn CLI, one module per group of related commands."""
