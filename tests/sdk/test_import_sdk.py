"""After `tollgate import new-api`, the incumbent's keys work unchanged in the official `openai`
SDK: the imported database is tests/fixtures/newapi/newapi.db (see its make.py)."""

import json
import os
import shutil
import subprocess
import tempfile
import time

import httpx
import openai
import pytest

from conftest import free_port

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "newapi")


@pytest.fixture(scope="module")
def imported():
    """Yields (base_url, values) of a Tollgate holding the imported fixture."""
    binary = os.environ.get("TOLLGATE_BIN", "target/debug/tollgate")
    work = tempfile.mkdtemp(prefix="tollgate-import-sdk-")
    source = os.path.join(work, "one-api.db")
    shutil.copy(os.path.join(FIXTURE, "newapi.db"), source)
    data = os.path.join(work, "data")
    done = subprocess.run([binary, "--data-dir", data, "import", "new-api", "--from", source],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "imported from new-api" in done.stdout
    port = free_port()
    server = subprocess.Popen([binary, "--listen", f"127.0.0.1:{port}", "--data-dir", data],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                httpx.get(f"{base}/api/status", timeout=1).raise_for_status()
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("tollgate did not start")
                time.sleep(0.05)
        with open(os.path.join(FIXTURE, "values.json")) as f:
            yield base, json.load(f)
    finally:
        server.terminate()
        server.wait(timeout=10)
        shutil.rmtree(work, ignore_errors=True)


def test_an_imported_key_lists_models_through_the_sdk(imported):
    base, values = imported
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="sk-" + values["keys"]["alice"], max_retries=0)
    ids = {m.id for m in client.models.list()}
    assert {"gpt-4o", "gpt-4o-mini"} <= ids


def test_a_key_deleted_in_new_api_stays_refused(imported):
    base, values = imported
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="sk-" + values["keys"]["deleted"], max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        client.models.list()
