"""The scaffold's GitHub workflow: LEV tests installed as docs/project.md says, and two pull-request comments.

``pip`` installs ``evaljig[lighteval]`` from the wheels folder (``--find-links``) until evaljig is
on PyPI; ``uv`` syncs the team's uv project (``uv sync --locked``, the folder in ``[tool.uv]
find-links``) and runs every command with ``uv run --frozen``. On a pull request the report job
posts ``evaljig-report comment`` and the review job ``evaljig review --markdown``, each as the
one comment whose first line is its marker, found and updated by ``UPSERT_COMMENT``.
"""

from __future__ import annotations

from evaljig_fixtures._scaffold.layout import Layout
from evaljig_fixtures._scaffold.render import plain, text_template

INSTALLERS = ("pip", "uv")
UPSERT_COMMENT = """\
const fs = require("fs");
const marker = process.env.MARKER;
let body = fs.readFileSync(process.env.BODY_FILE, "utf8");
if (!body.startsWith(marker)) body = `${marker}\\n${body}`;
const { owner, repo } = context.repo;
const issue_number = context.issue.number;
const comments = await github.paginate(github.rest.issues.listComments, { owner, repo, issue_number, per_page: 100 });
const mine = comments.find((c) => c.user?.login === "github-actions[bot]" && (c.body || "").startsWith(marker));
if (mine) {
  await github.rest.issues.updateComment({ owner, repo, comment_id: mine.id, body });
} else {
  await github.rest.issues.createComment({ owner, repo, issue_number, body });
}"""


def render_workflow(layout: Layout, installer: str, wheels: str) -> bytes:
    """``.github/workflows/lighteval.yml`` for ``layout``, installing with ``installer`` from ``wheels``."""
    wheels = plain(wheels)
    if installer == "uv":
        install = f"""\
      - uses: actions/setup-python@v6
        with:
          python-version: "3.11"
      - uses: astral-sh/setup-uv@v7
      # pyproject.toml names {wheels}/ in [tool.uv] find-links until evaljig is on PyPI
      - name: install the project with uv
        run: uv sync --locked"""
        run, freeze = "uv run --frozen ", "uv pip freeze"
    else:
        install = f"""\
      - uses: actions/setup-python@v6
        with:
          python-version: "3.11"
          cache: pip
      # evaljig's wheels from {wheels}/ until it is on PyPI; add your project's own install here
      - name: install evaljig with the lighteval stack
        run: |
          python -m pip install --upgrade pip
          python -m pip install --find-links "$GITHUB_WORKSPACE/{wheels}" 'evaljig[lighteval]' pytest-cov pytest-split
          python -m pip check"""
        run, freeze = "", "python -m pip freeze"
    upsert = "\n".join(f"            {line}" if line else "" for line in UPSERT_COMMENT.splitlines())
    return text_template(
        "lighteval.yml.tmpl",
        {
            "installer": installer, "wheels": wheels, "run_dir": plain(layout.run_dir),
            "run_path": plain(layout.run_path), "install_steps": install, "run": run, "freeze": freeze,
            "script": plain(layout.script_from_run), "upsert_comment": upsert,
        },
    )  # fmt: skip
