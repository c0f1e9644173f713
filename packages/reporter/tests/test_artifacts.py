from __future__ import annotations

from pathlib import Path

import pytest

from evaljig_report._artifacts import MAX_NAME_CHARS, NameRegistry, sanitize_name, write_artifacts

from .report_samples import CSV, PNG, b64


@pytest.mark.parametrize(
    ("name", "mime", "expected"),
    [
        ("../x", "image/png", "x.png"),
        ("../../etc/passwd", "text/csv", "passwd.csv"),
        ("..\\..\\win.png", "image/png", "win.png"),
        ("..", "image/png", "artifact.png"),
        ("", "text/csv", "artifact.csv"),
        (".hidden.png", "image/png", "hidden.png"),
        ("case.json", "text/csv", "case.json.csv"),
        ("plot 1 (final).PNG", "image/png", "plot_1_final.PNG"),
        ("résumé.csv", "text/csv", "r_sum.csv"),
    ],
)
def test_sanitize_name(name: str, mime: str, expected: str) -> None:
    assert sanitize_name(name, mime) == expected


def test_long_names_are_cut_but_keep_their_extension() -> None:
    name = sanitize_name("a" * 500 + ".png", "image/png")
    assert len(name) <= MAX_NAME_CHARS
    assert name.endswith(".png")


def test_collisions_get_numbered_case_insensitively() -> None:
    names = NameRegistry()
    assert [names.claim(n) for n in ("plot.png", "plot.png", "PLOT.png", "case.json")] == [
        "plot.png",
        "plot-2.png",
        "PLOT-3.png",
        "case-2.json",
    ]


def test_write_artifacts_writes_images_and_csv_and_skips_the_rest(tmp_path: Path) -> None:
    raw = [
        {"name": "../plot.png", "mime_type": "image/png", "base64": b64(PNG)},
        {"name": "plot.png", "mime_type": "image/png", "base64": b64(PNG)},
        {"name": "table.csv", "mime_type": "text/csv; charset=utf-8", "base64": b64(CSV)},
        {"name": "model.bin", "mime_type": "application/octet-stream", "base64": b64(b"\0\1")},
    ]
    records, errors = write_artifacts(tmp_path, raw, NameRegistry())
    assert errors == []
    assert [(r["status"], r.get("file")) for r in records] == [
        ("written", "plot.png"),
        ("written", "plot-2.png"),
        ("written", "table.csv"),
        ("skipped", None),
    ]
    assert (tmp_path / "plot.png").read_bytes() == PNG
    assert (tmp_path / "table.csv").read_bytes() == CSV
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plot-2.png", "plot.png", "table.csv"]
    assert not (tmp_path.parent / "plot.png").exists()


@pytest.mark.parametrize("payload", ["not base64!!", "abc", 42, None])
def test_malformed_base64_is_an_error_not_a_crash(tmp_path: Path, payload: object) -> None:
    records, errors = write_artifacts(
        tmp_path, [{"name": "p.png", "mime_type": "image/png", "base64": payload}], NameRegistry()
    )
    assert records[0]["status"] == "error"
    assert "base64" in records[0]["reason"]
    assert len(errors) == 1
    assert errors[0].startswith("artifact 'p.png'")
    assert list(tmp_path.iterdir()) == []


def test_artifacts_that_are_not_a_list_are_an_error(tmp_path: Path) -> None:
    assert write_artifacts(tmp_path, "nope", NameRegistry()) == ([], ["inference.artifacts must be a list, not str"])
