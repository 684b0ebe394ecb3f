"""No network traffic except to the configured Ollama host: ingest of real PDFs and a research run under a
Python audit hook that fails on any other host (socket.connect, socket.getaddrinfo)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from tests.conftest import DEMO_KB, REPO

GUARD = textwrap.dedent("""
    import json, sys
    ALLOWED = {"localhost", "127.0.0.1", "::1"}
    seen = []
    def host_of(event, args):
        if event == "socket.getaddrinfo":
            return str(args[0])
        if event == "socket.connect":
            address = args[1]
            return str(address[0]) if isinstance(address, tuple) else None  # a unix socket has no host
        return None
    def guard(event, args):
        host = host_of(event, args)
        if host is not None and host not in ALLOWED:
            seen.append([event, host])
            with open(sys.argv[1], "w") as sink:
                json.dump(seen, sink)
            raise RuntimeError(f"network egress to {host} ({event})")
    sys.addaudithook(guard)
    from rabbithole_lab.cli.main import main
    sys.exit(main(sys.argv[2:]))
""")


def _guarded(tmp_path, *args: str) -> tuple[subprocess.CompletedProcess, list]:
    report = tmp_path / "egress.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORT_", "ANONYMIZED_", "HF_HUB_DISABLE"))}
    env |= {"OLLAMA_BASE_URL": "http://127.0.0.1:9", "LLM_PROVIDER": "auto"}  # Ollama configured, not running
    done = subprocess.run([sys.executable, "-c", GUARD, str(report), "--env-file", "none", *args], cwd=REPO,
                          capture_output=True, text=True, env=env, timeout=900)
    return done, json.loads(report.read_text()) if report.exists() else []


def test_ingest_and_research_talk_to_no_host_but_the_configured_ones(tmp_path):
    db = tmp_path / "db"
    ingested, egress = _guarded(tmp_path, "ingest", str(DEMO_KB), "--db", str(db), "--no-progress")
    assert ingested.returncode == 0, ingested.stderr[-2000:]
    assert egress == [] and "Ingested 4 file(s)" in ingested.stdout
    researched, egress = _guarded(tmp_path, "research", "Welche Grenzwerte gelten bei Quantenstrahlung?", "--kb",
                                  str(DEMO_KB), "--db", str(db), "--no-hitl", "--out", str(tmp_path / "report"),
                                  "--sessions", str(tmp_path / "s.sqlite"), "--no-progress")
    assert researched.returncode == 0, researched.stderr[-2000:]
    assert egress == [] and (tmp_path / "report" / "report.html").is_file()


def _foreign_connections(trace: str) -> list[str]:
    """Connections (and DNS datagrams) to any address but loopback, from an strace log."""
    import re

    found = []
    for line in trace.splitlines():
        match = re.search(r"(?:connect|sendto)\(.*sin6?_addr=inet_pton\(AF_INET6, \"([^\"]+)\"|"
                          r"(?:connect|sendto)\(.*inet_addr\(\"([^\"]+)\"\)", line)
        if match:
            address = match.group(1) or match.group(2)
            if not (address.startswith("127.") or address in ("::1", "::ffff:127.0.0.1")):
                found.append(line.strip()[:200])
    return found


def test_no_dependency_phones_home_from_native_code_either(tmp_path):
    """onnxruntime (loaded by PyMuPDF's layout module) resolves a telemetry host in native code, where no
    Python audit hook sees it; strace sees every connect and DNS datagram of the process and its threads."""
    import shutil

    import pytest

    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("needs Debian's strace (apt-get install strace), which .ci/run installs")
    log = tmp_path / "strace.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORT_", "ANONYMIZED_", "HF_HUB_DISABLE"))}
    done = subprocess.run([strace, "-f", "-e", "trace=connect,sendto", "-o", str(log), sys.executable, "-m",
                           "rabbithole_lab.cli.main", "--env-file", "none", "ingest", str(DEMO_KB), "--db",
                           str(tmp_path / "db"), "--no-progress"], cwd=REPO, capture_output=True, text=True,
                          env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert _foreign_connections(log.read_text(errors="replace")) == []
