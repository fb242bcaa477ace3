"""The statement corpus's authors: each writes, in their own voice, what engineers say to a
coding agent, as templates with labels (see ``statement_corpus.py``).

One line is ``act | scope | operations | phases | paths | text``: act is one of rule,
preference, fact, one-off, correction, forget, neutral; scope (project | global) is where a
stored statement belongs when said inside a repository; operations, phases and paths are
comma-separated (paths as the patterns the rule applies to). ``{slot}`` fills come from
``SLOTS``. An author's templates are never split: fitting and reporting use different
authors.
"""

from __future__ import annotations

SLOTS: dict[str, tuple[str, ...]] = {
    "pm": ("pnpm", "yarn", "bun", "npm"),
    "lint": ("golangci-lint", "eslint", "ruff", "make lint", "pre-commit"),
    "test": ("pytest", "vitest", "jest", "go test ./...", "make test"),
    "dir": ("src/api", "src/components", "internal/db", "services/auth", "web/src", "pkg/http"),
    "br": ("main", "master", "develop"),
    "lib": ("lodash", "axios", "dayjs", "zod", "requests", "pydantic"),
    "topic": ("staging", "mock", "errcode", "Kubernetes", "Docker", "changelog", "Sentry"),
    "pair": ("zap>slog", "goose>atlas", "prettier>biome", "jest>vitest", "black>ruff",
             "moment>dayjs", "yarn>pnpm", "flake8>ruff"),
    "ver": ("9", "10", "18", "20", "3.12"),
    "name": ("Dana", "小王", "Alex", "阿杰"),
}  # fmt: skip

# zh: Chinese; en: English; mixed: Chinese with English words and clauses.
AUTHORS: dict[str, tuple[str, str]] = {
    "zh-backend": (
        "zh",
        """
rule|project|commit|||提交代码前先跑一遍 {test}
rule|project||||数据库字段一律用下划线命名
rule|project|deploy|||线上发布前要先灰度
rule|project||||错误日志必须带上 trace id
rule|project|push|||不要直接往 {br} 分支推代码
preference|global||||我比较喜欢短一点的函数
preference|global||||我习惯把配置写在 yaml 里
fact|project||||默认分支是 {br}
fact|project||||测试环境的地址是 test.internal
fact|project||||Redis 用的是 6.2 版本
fact|project||||数据库是 MySQL 8
fact|project||||这个服务的端口是 8080
fact|global||||我是做后端的，主要写 Go
one-off|||||这次先不写单测了
one-off|||||今天先别动数据库
correction|||||说错了，应该是 {new}，不是 {old}
forget|||||关于 {topic} 的那条作废了
forget|||||{topic} 那条规则不要了
neutral|||||这个接口为什么超时
neutral|||||帮我写个脚本导出数据
neutral|||||昨天的发布挺顺利的
neutral|||||这个测试一直挂
""",
    ),
    "en-backend": (
        "en",
        """
rule|project|commit|||Run {test} before you commit.
rule|project||||Use snake_case for database columns.
rule|project|deploy|||Always do a canary before a full deploy.
rule|project||||Every log line must carry a request id.
preference|global||||I like small functions.
preference|global||||I'd rather have explicit types everywhere.
fact|project||||The default branch is {br}.
fact|project||||Staging lives at staging.internal.
fact|project||||We're on Postgres 15.
fact|project||||The service listens on port 8080.
fact|project||||Our CI is GitHub Actions.
fact|global||||I'm a backend engineer, mostly Go.
one-off|||||Don't write tests for this spike.
one-off|||||Leave the DB alone today.
correction|||||I meant {new}, not {old}.
forget|||||Drop the {topic} rule.
forget|||||The note about {topic} doesn't apply anymore.
neutral|||||Why is this endpoint timing out?
neutral|||||Write a script to export the data.
neutral|||||Yesterday's release went fine.
neutral|||||This test keeps failing.
""",
    ),
    "mixed-backend": (
        "mixed",
        """
rule|project|commit|||commit 之前先跑一遍 {test}
rule|project||||DB 字段一律用 snake_case
rule|project|deploy|||deploy 之前要先灰度
rule|project||||log 里必须带 trace id
preference|global||||我比较喜欢 small function
fact|project||||default branch 是 {br}
fact|project||||staging 的地址是 staging.internal
fact|project||||我们用的是 Postgres 15
fact|project||||service 的 port 是 8080
one-off|||||这次先不写 test
correction|||||说错了，是 {new} 不是 {old}
forget|||||{topic} 那条 rule 不要了
neutral|||||这个 API 为啥 timeout
neutral|||||帮我写个 script 导出数据
neutral|||||这个 test 一直 fail
""",
    ),
    "zh-terse": (
        "zh",
        """
rule|project|commit|||提交前跑 {lint}
rule|project|push|||别往 {br} 直接推
rule|project|||{dir}/**|{dir} 下面不许用 any
rule|project|install|||装依赖只用 {pm}
preference|global||||我习惯两个空格缩进
preference|global|commit|||我一般提交前先 rebase
fact|project||||测试用 {test}
fact|project||||组件都在 packages/ui
one-off|||||这次先别跑测试
one-off|||||今天先不提交
correction|||||不对，{new} 不是 {old}
correction|||||{old} 改成 {new}
forget|||||{topic} 那条不算了
forget|||||忘了 {topic} 那条吧
neutral|||||跑一下测试
neutral|||||这个报错啥意思
neutral|||||帮我看下 {dir} 的代码
""",
    ),
    "zh-polite": (
        "zh",
        """
rule|project|commit|||麻烦以后每次提交之前都跑一下 {lint}，谢谢
rule|project||review||以后代码评审的时候请重点看一下错误处理
rule|project|install|||请记住，这个项目装依赖一律用 {pm}
rule|project||||以后新写的接口请都加上单元测试
preference|global||||我个人比较喜欢函数式的写法
preference|global||||我比较习惯用中文写注释
fact|project||||这个项目的后端是用 Go 写的
fact|global||||我叫{name}，是做后端的
one-off|||||这次麻烦先不要推送，我还要再看看
one-off|||||暂时先别改 {dir} 下面的文件
correction|||||不好意思我说错了，应该用 {new}，不是 {old}
correction|||||麻烦改一下，之前说的 {old} 换成 {new}
forget|||||麻烦把关于 {topic} 的那条规则删掉
forget|||||之前说的 {topic} 那条麻烦作废一下
neutral|||||请帮我看一下为什么 CI 挂了
neutral|||||能帮我解释一下这段代码吗
""",
    ),
    "zh-team": (
        "zh",
        """
rule|project|merge|||我们组一律 squash 合并
rule|project|||src/**|src 下面的文件名统一用小写加下划线
rule|project|deploy|||部署之前一定要先在预发环境验证
rule|project|release|||发版之前记得打 tag
preference|global||||我喜欢把常量放在文件最上面
fact|project||||我们的 staging 数据库在 10.0.0.5
fact|project||||这个服务跑在 k8s 上
one-off|||||这一次就先跳过 lint
correction|||||其实应该用 {new}，不用 {old}
forget|||||删掉关于 {topic} 的那条
neutral|||||我们组今天开会讨论一下架构
neutral|||||这个函数总是返回空值
""",
    ),
    "zh-regional": (
        "zh",
        """
rule|project|commit|||這個專案 commit 之前都要先跑 {lint} 喔
rule|project||||這個專案的程式碼一律用四個空格縮排
rule|project|push|||以後不要直接推到 {br}
preference|global||||我比較喜歡用 tab 縮排
fact|project||||這個儲存庫的測試用 {test}
one-off|||||這次先不要部署
correction|||||不對，是 {new} 不是 {old}
forget|||||忘掉 {topic} 那條規則
neutral|||||幫我看一下這個錯誤
neutral|||||這個 API 好慢喔
""",
    ),
    "zh-slang": (
        "zh",
        """
rule|project|push|||以后别往 {br} 硬推了，都走 PR
rule|project||||以后别整那些花里胡哨的抽象，能简单就简单
rule|project|install|||装包就用 {pm}，别瞎换
preference|global||||我一般不写分号
fact|project||||这仓库的单测用 {test}
one-off|||||先别管 lint 了，今天赶紧合了
correction|||||搞错了，{old} 换成 {new}
forget|||||{topic} 那条作废
neutral|||||卧槽这个 bug 好离谱
neutral|||||这个接口又挂了
""",
    ),
    "zh-lead": (
        "zh",
        """
rule|project|commit|||在这个仓库里，每次提交前都要先跑 {test}
rule|project|||{dir}/**|{dir} 目录下的代码必须有测试覆盖
rule|global||||所有项目都统一用 UTF-8 编码
rule|project|release|||发布之前必须更新 CHANGELOG.md
preference|global||||我喜欢先写测试再写实现
fact|project||||这个仓库的文档都在 docs 目录
one-off|||||本次先不用写文档
correction|||||更正一下，应该是 {new}，不是 {old}
forget|||||别管之前说的 {topic} 那条了
neutral|||||明天的评审会改到下午
""",
    ),
    "zh-junior": (
        "zh",
        """
rule|project|install|||以后加依赖都用 {pm} 吧
rule|project||||以后写组件都用函数式组件
rule|project||||以后接口错误码都统一用 errcode 包
preference|global||||我习惯先看测试再改代码
fact|project||||设计组件都在 packages/ui 里
one-off|||||这回先别提交
correction|||||改一下，{old} 改成 {new}
forget|||||之前说的 {topic} 那条不用了
neutral|||||{dir} 里面这个函数是干嘛的
neutral|||||怎么跑测试来着
""",
    ),
    "zh-ops": (
        "zh",
        """
rule|project|deploy|||这个仓库部署的时候先发 staging
rule|project|deploy|||上线前要先通知运维
rule|project|release|||发版前记得更新版本号
preference|global||||我喜欢用 make 管理脚本
fact|project||||生产环境部署在阿里云
one-off|||||今晚先别上线
correction|||||不对不对，{old} 改为 {new}
forget|||||{topic} 的那条规则取消吧
neutral|||||部署失败了，帮我看看日志
""",
    ),
    "zh-reviewer": (
        "zh",
        """
rule|project||review||code review 的时候重点看边界条件
rule|project||review||评审的时候先看测试再看实现
rule|project|||{dir}/**|{dir} 下面的代码不要用全局变量
preference|global||||我讨厌过长的函数
fact|project||||主分支是 {br}
one-off|||||这个 PR 先不用评审
correction|||||纠正一下，用 {new} 替换 {old}
forget|||||之前说的 {topic} 那条不算数了
neutral|||||这个 PR 改了哪些文件
""",
    ),
    "en-terse": (
        "en",
        """
rule|project|install|||{pm} only for installs
rule|project|push|||never push to {br}
rule|project|commit|||run {lint} before every commit
rule|project|||{dir}/**|no console.log in {dir}
preference|global||||I prefer tabs
preference|global|commit|||I usually squash before committing
fact|project||||tests run with {test}
fact|project||||design components live in packages/ui
one-off|||||skip the tests this time
one-off|||||don't commit for now
correction|||||actually, {new} not {old}
correction|||||use {new} instead of {old}
forget|||||forget the {topic} rule
forget|||||the {topic} rule no longer applies
neutral|||||run the tests
neutral|||||why is CI red
neutral|||||fix the login bug
""",
    ),
    "en-polite": (
        "en",
        """
rule|project|commit|||Could you please always run {lint} before committing?
rule|project|install|||Please always use {pm} to install dependencies in this repo.
rule|project||||From now on, please write docstrings for every public function.
preference|global||||I'd rather you keep answers short.
preference|global||||I really prefer small, focused pull requests.
fact|project||||Just so you know, the staging database is at 10.0.0.5.
fact|global||||My name is {name}, by the way.
one-off|||||Could you skip the linter just for this change?
one-off|||||Please don't push anything today.
correction|||||Sorry, I meant {new}, not {old}.
correction|||||Correction: please use {new} rather than {old}.
forget|||||Please forget what I said about {topic}.
forget|||||Could you drop the rule about {topic}?
neutral|||||Could you explain what this function does?
neutral|||||Thanks, that looks good.
""",
    ),
    "en-team": (
        "en",
        """
rule|project|merge|||We always squash-merge here.
rule|project|release|||Before every release, update the changelog.
rule|project|deploy|||We never deploy on Fridays.
rule|project|||{dir}/**|Everything under {dir} must have tests.
preference|global||||I like early returns over nested ifs.
fact|project||||Our API is hosted on Fly.io.
fact|project||||The main branch is {br}.
one-off|||||For this PR, ignore the coverage check.
correction|||||No, {new}, not {old}.
forget|||||Scrap the rule about {topic}.
neutral|||||The team meets on Mondays to plan the sprint.
neutral|||||The function always returns None here, why?
""",
    ),
    "en-slang": (
        "en",
        """
rule|project|push|||dont ever force push to {br}, ok?
rule|project|install|||npm is dead to us, pnpm all the way
rule|project||||no magic numbers, ever
preference|global||||im not a fan of huge PRs
fact|project||||fyi prod runs on k8s
one-off|||||just ship it without tests this once
correction|||||nah, switch from {old} to {new}
forget|||||nvm what I said about {topic}
neutral|||||lol this test is flaky af
neutral|||||ship it
""",
    ),
    "en-typos": (
        "en",
        """
rule|project|commit|||alwasy run {lint} befor commiting
rule|project|install|||pls use {pm} for installs in this repo
rule|project|push|||nevr push directly to {br}
preference|global||||i perfer spaces over tabs
fact|project||||teh tests use {test}
one-off|||||skip lint this tiem
correction|||||actualy, use {new} instead of {old}
forget|||||forgt the {topic} rule
neutral|||||wy is the build broken
""",
    ),
    "en-lead": (
        "en",
        """
rule|project||review||During code review, always check error handling first.
rule|project|||{dir}/**|In this repo, every endpoint under {dir} needs an integration test.
rule|global||||In every project, keep functions under 50 lines.
rule|project|deploy|||Always run the smoke tests before deploying.
preference|global||||I tend to write tests first.
fact|project||||The docs for this service live in docs/.
one-off|||||Until the migration lands, don't touch {dir}.
correction|||||On second thought, replace {old} with {new}.
forget|||||Never mind what I said about {topic}.
neutral|||||Let's plan the refactor next week.
""",
    ),
    "en-oss": (
        "en",
        """
rule|project|commit|||Sign off every commit with -s.
rule|project|release|||Tag every release with a v prefix.
rule|project||||Keep the public API backwards compatible.
preference|global||||I hate trailing whitespace.
fact|project||||This project uses {test} for its test suite.
one-off|||||Leave the version alone for now.
correction|||||Change {old} to {new} in that rule.
forget|||||Ignore what I said about {topic}.
neutral|||||Open a PR for this branch.
""",
    ),
    "en-mobile": (
        "en",
        """
rule|project|build|||Always build with the release profile.
rule|project|test|||Run the tests with {test}.
rule|project|||*.swift|Use SwiftLint for all Swift files.
preference|global||||I'd rather use async/await than callbacks.
fact|project||||The app targets iOS 17.
one-off|||||Today, skip the UI tests.
correction|||||Wait, it should be {new}, not {old}.
forget|||||Delete the memory about {topic}.
neutral|||||The simulator keeps crashing.
""",
    ),
    "en-data": (
        "en",
        """
rule|project||||Always pin dependency versions in this project.
rule|project||||Every migration must be reversible.
rule|project|edit|||Never edit generated files by hand.
preference|global||||I prefer pandas over raw SQL for analysis.
fact|project||||Our warehouse is BigQuery.
one-off|||||Just for now, hardcode the date.
correction|||||Actually, use {new} instead.
forget|||||That {topic} note is obsolete.
neutral|||||How long does the pipeline take?
""",
    ),
    "mixed-terse": (
        "mixed",
        """
rule|project|install|||这个 repo 里 always 用 {pm}
rule|project|commit|||commit 之前先跑 {lint}
rule|project|push|||别再往 {br} 直接 push 了，都走 PR
rule|project|||{dir}/**|{dir} 下面的组件文件名都用 PascalCase
preference|global|commit|||我一般 commit message 用英文写
preference|global||||我习惯用 early return
fact|project||||这个仓库的单测用 {test}
fact|project||||API 文档都在 docs/api
one-off|||||这次先 skip 掉 lint
one-off|||||今天先别 push
correction|||||不对，应该用 {new}，不是 {old}
correction|||||{old} 换成 {new}
forget|||||之前说的 {topic} 那条不算了
forget|||||forget 掉 {topic} 那条
neutral|||||帮我 review 一下这个 PR
neutral|||||这个 test 为啥 fail 了
""",
    ),
    "mixed-polite": (
        "mixed",
        """
rule|project||review||以后 code review 的时候麻烦重点看一下 any
rule|project|commit|||这个项目提交之前要跑 {lint}
rule|project|install|||麻烦以后 install 依赖都用 {pm}
preference|global||||我比较 prefer 小一点的 PR
fact|project||||我们的 CI 用的是 GitHub Actions
one-off|||||这次麻烦先不要 deploy
correction|||||不好意思，{old} 改成 {new}
forget|||||麻烦把 {topic} 那条 rule 删掉
neutral|||||能帮我看下这个 error log 吗
""",
    ),
    "mixed-team": (
        "mixed",
        """
rule|project|deploy|||这个仓库 deploy 的时候先发 staging
rule|project|merge|||我们 team 一律 squash merge
rule|project|release|||发版之前记得更新 CHANGELOG.md
rule|project|test|||写测试的时候 mock 数据统一放 __mocks__
preference|global||||我喜欢用 pnpm workspace 管 monorepo
fact|project||||staging 的 URL 是 staging.example.com
one-off|||||这个 PR 先不用写 test
correction|||||改一下，之前说的 {old} 改成 {new}
forget|||||之前说的 errcode 那条不算了
neutral|||||今天的 standup 取消了
""",
    ),
    "mixed-slang": (
        "mixed",
        """
rule|project|push|||以后别 force push 到 {br}，会出事
rule|project||||以后 TS 里别用 any，用 unknown
preference|global||||我一般先 rebase 再 push
fact|project||||prod 跑在 k8s 上
one-off|||||先 hotfix 一下，lint 回头再说
correction|||||搞错了，switch to {new}，不是 {old}
forget|||||{topic} 那条作废吧
neutral|||||这个 PR 太大了看不过来
""",
    ),
    "mixed-lead": (
        "mixed",
        """
rule|project|commit|||在这个 repo 里，每次 commit 前都要跑 {test}
rule|project|||{dir}/**|{dir} 下面的 handler 必须写 unit test
rule|global||||所有项目都用 UTF-8，no exceptions
preference|global||||我个人 prefer 先写 interface
fact|project||||design tokens 都在 packages/tokens
one-off|||||just this once，先不跑 e2e
correction|||||更正一下，应该用 {new} 不是 {old}
forget|||||别管之前说的 {topic} 那条 rule
neutral|||||帮我把这个 function 重构一下
""",
    ),
    "mixed-ops": (
        "mixed",
        """
rule|project|deploy|||上线之前要先跑 smoke test
rule|project|install|||加依赖之前先问我，别乱 install
rule|project|release|||release 之前 bump 一下 version
preference|global||||我喜欢用 make 跑 script
fact|project||||logs 都在 Grafana 上
one-off|||||今晚先别 release
correction|||||不对，{old} 改为 {new}
forget|||||删掉关于 {topic} 的那条
neutral|||||给项目加一个 lodash 依赖
neutral|||||把 axios 升级到最新版本
""",
    ),
    "mixed-reviewer": (
        "mixed",
        """
rule|project||review||review 的时候先看 test 再看实现
rule|project|||{dir}/**|{dir} 里不要用 global 变量
preference|global||||我讨厌 nested ternary
fact|project||||main branch 是 {br}
one-off|||||这个 PR 先不 review
correction|||||其实应该用 {new}，不用 {old}
forget|||||{topic} 那个 rule 不用管了
neutral|||||这个 diff 有点乱
""",
    ),
}

# Written after the reader was frozen, by voices and on topics not in the other authors,
# and measured once: the "blind" split (each template said once, as written).
BLIND: dict[str, tuple[str, str]] = {
    "blind-zh": (
        "zh",
        """
rule|project||||以后所有的 SQL 都要走参数化，别拼字符串
rule|project|commit|||每次提交都要关联需求单号
rule|project|merge|||合并请求至少要两个人点赞才能合
rule|project|||migrations/**|migrations 目录下的文件一旦合进主干就不要再改
rule|project|deploy|||周五下午不发布线上
rule|project||||前端的金额一律用分来存，不要用浮点
rule|project|release|||打包发布之前先跑一遍 e2e
rule|global||||所有项目的注释都用中文写
preference|global||||我喜欢 git log 保持线性
preference|global||||我不太喜欢用缩写命名变量
preference|global||||我习惯先写接口定义再写实现
fact|project||||这个项目的 Node 版本是 20
fact|project||||消息队列用的是 RabbitMQ
fact|project||||前端代码在 web 目录下
fact|global||||我是前端组的，平时主要写 React
one-off|||||这次的改动先别写文档了
one-off|||||今天先不要动 CI 配置
one-off|||||先临时把这个测试跳过
correction|||||不对，Node 版本应该是 22，不是 20
correction|||||说错了，RabbitMQ 换成 Kafka
forget|||||之前说的周五不发布那条不算了
forget|||||把关于金额用分存的那条规则删了吧
neutral|||||这段代码有内存泄漏吗
neutral|||||帮我把这个函数改成异步的
neutral|||||昨天线上报警了好几次
neutral|||||给这个组件加个 loading 状态
""",
    ),
    "blind-en": (
        "en",
        """
rule|project||||Parameterize every SQL query; no string concatenation.
rule|project|commit|||Every commit has to reference a ticket number.
rule|project|merge|||Don't merge anything without two approvals.
rule|project|||migrations/**|Never modify files in migrations/ once they're merged.
rule|project|deploy|||No deploys on Friday afternoons.
rule|project||||Store money as integer cents, never floats.
rule|project|release|||Run the e2e suite before cutting a release.
rule|global||||Across all my repos, write comments in English.
preference|global||||I like a linear git history.
preference|global||||I'm not a fan of abbreviated variable names.
preference|global||||I usually write the interface before the implementation.
fact|project||||This project is on Node 20.
fact|project||||The message queue is RabbitMQ.
fact|project||||The frontend code lives in web/.
fact|global||||I'm on the frontend team, mostly React.
one-off|||||Don't bother with docs for this change.
one-off|||||Leave the CI config alone today.
one-off|||||Temporarily skip that flaky test.
correction|||||Actually, Node 22, not 20.
correction|||||Sorry, switch from RabbitMQ to Kafka.
forget|||||Forget the rule about Friday deploys.
forget|||||Drop the note about storing money as cents.
neutral|||||Is there a memory leak in this code?
neutral|||||Make this function async.
neutral|||||Prod alerted a bunch of times yesterday.
neutral|||||Add a loading state to this component.
""",
    ),
    "blind-mixed": (
        "mixed",
        """
rule|project||||以后 SQL 一律 parameterize，别拼 string
rule|project|commit|||每个 commit 都要带上 ticket 号
rule|project|merge|||PR 至少两个 approve 才能 merge
rule|project|||migrations/**|migrations/ 下面的文件 merge 之后就别改了
rule|project|deploy|||周五下午别 deploy
rule|project||||金额一律用 cents 存，不要用 float
rule|project|release|||release 之前先跑一遍 e2e
preference|global||||我比较喜欢 linear 的 git history
preference|global||||我习惯先写 interface 再写 implementation
fact|project||||这个 project 的 Node 版本是 20
fact|project||||message queue 用的是 RabbitMQ
fact|global||||我是 frontend 组的，主要写 React
one-off|||||这次的改动先不写 docs
one-off|||||今天先别动 CI config
correction|||||不对，Node 应该是 22，不是 20
correction|||||RabbitMQ 换成 Kafka
forget|||||之前说的周五不 deploy 那条不算了
forget|||||把 cents 那条 rule 删掉
neutral|||||这段 code 有 memory leak 吗
neutral|||||帮我把这个 function 改成 async
neutral|||||给这个 component 加个 loading state
""",
    ),
}

# Reported on, never fitted: three authors per language, each a different voice.
REPORTED = frozenset(
    {
        "zh-regional", "zh-lead", "zh-reviewer",
        "en-typos", "en-lead", "en-data",
        "mixed-team", "mixed-lead", "mixed-reviewer",
    }
)  # fmt: skip
