"""The workbench's saved reports and batch runs never share a folder: a save gets a folder of its own
each time, and a batch run takes only its own earlier folders as done."""

from __future__ import annotations

from datetime import date

from rabbithole_lab.batch.batch_run import REPORT_NOTEBOOK, finished_folder
from rabbithole_lab.report.folder import new_saved_folder, report_folder_name

QUESTION = "Wie oft wird die Nebelglocke am Kai geprüft?"
DAY = date(2026, 11, 25)


def test_each_save_gets_a_new_folder_beside_the_batch_folder(tmp_path):
    first = new_saved_folder(tmp_path, QUESTION, DAY)
    first.mkdir()
    second = new_saved_folder(tmp_path, QUESTION, DAY)
    assert first.name == f"{report_folder_name(QUESTION, DAY)}_saved" and second.name == f"{first.name}-2"
    assert first.name != report_folder_name(QUESTION, DAY)


def test_a_batch_run_takes_only_its_own_earlier_folder_as_done(tmp_path):
    saved = new_saved_folder(tmp_path, QUESTION, DAY)
    saved.mkdir()
    (saved / "report.json").write_text("{}", encoding="utf-8")
    assert finished_folder(tmp_path, QUESTION) is None  # the workbench's save is not a batch result
    batch = tmp_path / report_folder_name(QUESTION, DAY)
    batch.mkdir()
    (batch / "report.json").write_text("{}", encoding="utf-8")
    assert finished_folder(tmp_path, QUESTION) is None  # no executed notebook: not finished
    (batch / REPORT_NOTEBOOK.name).write_text("{}", encoding="utf-8")
    assert finished_folder(tmp_path, QUESTION) == batch
