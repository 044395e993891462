"""MariaDB and PostgreSQL servers holding the new-api fixture, for the SDK check of the imports
from those engines: the same steps as tests/common/sql_servers.rs (Debian's binaries, a loopback
ephemeral port, a temporary data directory, `nobody` when we are root, the fixture loaded with
the engine's own client, stopped afterwards). Outside CI a missing engine skips; under CI
scripts/test.sh installs them and a missing one fails.
"""

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse

import pytest

PASSWORD = "p@ss:w/rd"
DATABASE = "newapi"


def _in_ci():
    return os.environ.get("CI", "") not in ("", "false", "0")


def _find(names, dirs=("/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin")):
    for name in names:
        for d in dirs:
            path = os.path.join(d, name)
            if os.path.isfile(path):
                return path
    return None


def _binaries(engine):
    if engine == "mariadb":
        found = (_find(["mariadbd", "mysqld"]), _find(["mariadb-install-db", "mysql_install_db"]),
                 _find(["mariadb", "mysql"]))
    else:
        dirs = sorted((d for d in glob.glob("/usr/lib/postgresql/*/bin")
                       if os.path.isfile(os.path.join(d, "postgres"))),
                      key=lambda d: int(d.split("/")[-2]) if d.split("/")[-2].isdigit() else 0)
        found = tuple(os.path.join(dirs[-1], n) for n in ("postgres", "initdb", "psql")) if dirs else (None,)
    if None in found:
        if _in_ci():
            pytest.fail(f"{engine} is not installed under CI")
        pytest.skip(f"{engine} is not installed here; scripts/test.sh installs it under CI")
    return found


def _unprivileged():
    """(uid, gid) of nobody when we are root, else None (we run the server ourselves)."""
    if os.geteuid() != 0:
        return None
    nobody = pwd.getpwnam("nobody")
    return nobody.pw_uid, nobody.pw_gid


def _as(user):
    if user is None:
        return {}
    return {"user": user[0], "group": user[1], "extra_groups": []}


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_port(proc, port, log):
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited: {open(log).read()}")
            time.sleep(0.1)
    raise RuntimeError(f"the server did not listen on {port}: {open(log).read()}")


class SqlServer:
    """A running server with the fixture loaded; `dsn` is the incumbent's setting for it."""

    def __init__(self, engine, fixture):
        server, init, client = _binaries(engine)
        self.user = _unprivileged()
        self.dir = tempfile.mkdtemp(prefix=f"tollgate-sdk-{engine}-")
        if self.user:
            os.chown(self.dir, *self.user)
        self.log = os.path.join(self.dir, "server.log")
        self.port = _free_port()
        self.proc = None
        try:
            (self._start_mariadb if engine == "mariadb" else self._start_postgres)(server, init, client, fixture)
        except BaseException:
            self.stop()
            raise

    def _spawn(self, args):
        log = open(self.log, "w")
        if self.user:
            os.chown(self.log, *self.user)
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, **_as(self.user))
        _wait_for_port(self.proc, self.port, self.log)

    def _start_mariadb(self, server, init, client, fixture):
        data, sock = os.path.join(self.dir, "data"), os.path.join(self.dir, "sock")
        subprocess.run([init, "--no-defaults", "--auth-root-authentication-method=normal", "--skip-test-db",
                        f"--datadir={data}"], check=True, capture_output=True, stdin=subprocess.DEVNULL,
                       **_as(self.user))
        self._spawn([server, "--no-defaults", f"--datadir={data}", f"--socket={sock}", f"--port={self.port}",
                     "--bind-address=127.0.0.1", f"--pid-file={os.path.join(self.dir, 'pid')}",
                     "--innodb-flush-log-at-trx-commit=0", "--skip-log-bin", "--skip-name-resolve"])
        mariadb = [client, "--no-defaults", "-uroot", f"--socket={sock}"]
        subprocess.run(mariadb + ["-e", f"CREATE DATABASE {DATABASE} CHARACTER SET utf8mb4 COLLATE "
                                        f"utf8mb4_general_ci; CREATE USER '{DATABASE}'@'127.0.0.1' IDENTIFIED "
                                        f"BY '{PASSWORD}'; GRANT ALL ON {DATABASE}.* TO '{DATABASE}'@'127.0.0.1';"],
                       check=True, capture_output=True, stdin=subprocess.DEVNULL, **_as(self.user))
        with open(fixture) as f:
            subprocess.run(mariadb + [DATABASE], stdin=f, check=True, capture_output=True, **_as(self.user))
        self.dsn = (f"{DATABASE}:{PASSWORD}@tcp(127.0.0.1:{self.port})/{DATABASE}"
                    "?charset=utf8mb4&parseTime=True&loc=Local")

    def _start_postgres(self, server, init, client, fixture):
        data, pwfile = os.path.join(self.dir, "data"), os.path.join(self.dir, "pw")
        with open(pwfile, "w") as f:
            f.write(PASSWORD)
        if self.user:
            os.chown(pwfile, *self.user)
        subprocess.run([init, "-D", data, f"--username={DATABASE}", f"--pwfile={pwfile}",
                        "--auth=scram-sha-256", "--encoding=UTF8", "--no-sync"],
                       check=True, capture_output=True, stdin=subprocess.DEVNULL, **_as(self.user))
        self._spawn([server, "-D", data, "-p", str(self.port), "-k", self.dir,
                     "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
        env = dict(os.environ, PGPASSWORD=PASSWORD)
        psql = [client, "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(self.port), "-U", DATABASE]
        deadline = time.monotonic() + 60
        while True:  # the postmaster listens before it accepts logins
            done = subprocess.run(psql + ["-d", "postgres", "-c", f"CREATE DATABASE {DATABASE}"],
                                  env=env, capture_output=True, stdin=subprocess.DEVNULL)
            if done.returncode == 0:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(done.stderr.decode())
            time.sleep(0.2)
        with open(fixture) as f:
            subprocess.run(psql + ["-d", DATABASE], stdin=f, env=env, check=True, capture_output=True)
        self.dsn = (f"postgres://{DATABASE}:{urllib.parse.quote(PASSWORD, safe='')}@127.0.0.1:{self.port}"
                    f"/{DATABASE}?sslmode=disable")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
