"""lm-evaluation-harness: ``local-completions`` multiple choice scored by loglikelihood against the gateway.

The task is defined in a temporary folder (``include_path``) over a local JSONL file; the tokenizer is
GPT-2's, built offline (see ``gpt2.py``), and requests go as token ids (lm-eval's default) or as
strings (``tokenized_requests=False``: lm-eval then slices the echoed ``token_logprobs`` at the
context's GPT-2 token count, which the gateway's tokenizer, GPT-2's, matches). With the
answer key, every keyed choice must be the most likely one (accuracy 1.0) and the loglikelihoods must
differ (a gateway scoring every choice 0.0 would pass ``acc`` by tie-breaking on the first choice).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from evaljig_gateway import Gateway

from .conftest import client
from .gpt2 import register_gpt2

#: question, choices, index of the right one; the right one is never the first (ties pick the first).
ROWS = [
    ("What is the capital of France?", ["Lyon", "Paris", "Marseille", "Nice"], 1),
    ("Which planet is the largest?", ["Mars", "Venus", "Jupiter", "Earth"], 2),
    ("What colour is the clear daytime sky?", ["green", "red", "yellow", "blue"], 3),
]
TASK = """task: evaljig_capitals
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: "Question: {{{{question}}}}\\nAnswer:"
doc_to_choice: "{{{{choices}}}}"
doc_to_target: gold
metric_list:
  - metric: acc
    aggregation: mean
    higher_is_better: true
"""


@pytest.mark.cell("lm-eval", "loglikelihood")
@pytest.mark.parametrize(
    "tokenized",
    [
        pytest.param(True, id="token-ids"),
        pytest.param(False, id="strings"),  # the gateway cuts text as GPT-2 does, so lm-eval's ctxlen slice fits
    ],
)
def test_multiple_choice_accuracy(tmp_path: Path, tokenized: bool) -> None:
    lm_eval = client("lm_eval")
    register_gpt2(client("tiktoken"))
    data = tmp_path / "capitals.jsonl"
    data.write_text("".join(json.dumps({"question": q, "choices": c, "gold": g}) + "\n" for q, c, g in ROWS))
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "evaljig_capitals.yaml").write_text(TASK.format(data=data))
    key = {q: c[g] for q, c, g in ROWS}
    with Gateway(answers=key) as gw:
        results: Any = lm_eval.simple_evaluate(
            model="local-completions",
            model_args=(
                f"base_url={gw.base_url}/completions,model=gpt2,tokenizer_backend=tiktoken,"
                f"tokenized_requests={tokenized},max_retries=1"
            ),
            tasks=["evaljig_capitals"],
            task_manager=lm_eval.tasks.TaskManager(include_path=str(tasks)),
            log_samples=True,
            random_seed=0,
            numpy_random_seed=0,
            fewshot_random_seed=0,
        )
        prompts = [c.body["prompt"] for c in gw.calls(path="/v1/completions")]
    assert results["results"]["evaljig_capitals"]["acc,none"] == 1.0
    for sample in results["samples"]["evaljig_capitals"]:
        scores = [loglikelihood for (loglikelihood, _greedy), *_ in sample["resps"]]
        assert all(math.isfinite(s) and s < 0 for s in scores), scores
        assert len(set(scores)) == len(scores), scores  # non-degenerate: no ties
        assert max(range(len(scores)), key=scores.__getitem__) == sample["doc"]["gold"]
    sent = [p for prompt in prompts for p in (prompt if isinstance(prompt, list) else [prompt])]
    assert all(isinstance(p, list) for p in sent) if tokenized else all(isinstance(p, str) for p in sent)
