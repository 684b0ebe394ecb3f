"""The ipywidgets workbench: panels composed into `Workbench` (import from rabbithole_lab.ui.workbench)."""
