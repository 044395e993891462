"""After `tollgate import new-api`, the incumbent's keys work unchanged in the official `openai`
SDK, whichever engine the incumbent ran on: tests/fixtures/newapi/newapi.db (SQLITE_PATH, see its
make.py), and the same installation on MariaDB and PostgreSQL (mysql.sql, postgres.sql from
make_sql.py; servers started by sql_servers.py, the DSN with its password in
TOLLGATE_IMPORT_FROM as an operator passes it)."""

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
from sql_servers import SqlServer

FIXTURE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "newapi")


def _import(binary, data, work, engine):
    """Runs the import from `engine`'s fixture into `data` (a MariaDB or PostgreSQL server is
    started for it and stopped once the import is done: Tollgate no longer needs the incumbent)."""
    db = None
    try:
        if engine == "sqlite":
            source = os.path.join(work, "one-api.db")
            shutil.copy(os.path.join(FIXTURE, "newapi.db"), source)
            args, env = ["--from", source], os.environ
        else:
            db = SqlServer(engine, os.path.join(FIXTURE, "mysql.sql" if engine == "mariadb" else "postgres.sql"))
            args, env = [], dict(os.environ, TOLLGATE_IMPORT_FROM=db.dsn)
        done = subprocess.run([binary, "--data-dir", data, "import", "new-api", *args],
                              capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        kind = {"sqlite": "sqlite", "mariadb": "mysql", "postgres": "postgres"}[engine]
        assert f"imported from new-api ({kind})" in done.stdout
    finally:
        if db is not None:
            db.stop()


@pytest.fixture(scope="module", params=["sqlite", "mariadb", "postgres"])
def imported(request):
    """Yields (base_url, values) of a Tollgate holding the fixture imported from each engine."""
    binary = os.environ.get("TOLLGATE_BIN", "target/debug/tollgate")
    work = tempfile.mkdtemp(prefix="tollgate-import-sdk-")
    data = os.path.join(work, "data")
    try:
        _import(binary, data, work, request.param)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
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
