"""Rabbithole Lab: a local research workbench that follows the references inside documents."""

import os

# Privacy: nothing talks to the network except the configured Ollama and Chroma hosts. The telemetry of
# every dependency is off before any of them is imported (onnxruntime, loaded by PyMuPDF's layout
# module, looks up a Microsoft host otherwise; Chroma and Hugging Face have switches of their own).
for _name, _value in {"ORT_DISABLE_TELEMETRY": "1", "ANONYMIZED_TELEMETRY": "False",
                      "HF_HUB_DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1"}.items():
    os.environ.setdefault(_name, _value)
