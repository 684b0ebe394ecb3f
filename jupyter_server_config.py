# Jupyter server settings for this repository (`make lab` passes this file): the tracked notebooks in
# notebooks/ are saved without outputs, so a researcher's session never ends up in the repository.
c = get_config()  # noqa: F821 (provided by Jupyter when it loads this file)
c.FileContentsManager.pre_save_hook = "rabbithole_lab.ui.notebook_hygiene.scrub_on_save"
# rooted at the repository whatever folder `jupyter lab` is started from or with which file: reports/ and kb/
# are in the file browser, and a citation's link /files/kb/… opens the PDF
from pathlib import Path  # noqa: E402

c.ServerApp.root_dir = str(Path(__file__).resolve().parent)
# JupyterLab's defaults for this project (lab-settings/overrides.json): a Markdown file opens rendered, so the
# batch's index.md is a page whose links open the reports inside the Lab. A researcher's own settings still win.
c.LabApp.app_settings_dir = str(Path(__file__).resolve().parent / "lab-settings")
