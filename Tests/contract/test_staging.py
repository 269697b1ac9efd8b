"""Staging as it is: HTTP proxies (mitmproxy from PyPI as a real forward proxy, plain and TLS)."""
import os
import re
import socket
import subprocess
from types import SimpleNamespace

import pytest

from conftest import ROOT, free_port, shop, wait_until

MITMDUMP = str(ROOT / ".venv" / "bin" / "mitmdump")

LOG_FLOWS = """
import os
import re

def response(flow):
    with open(os.environ["FLOW_LOG"], "a") as log:
        log.write(f"{flow.request.method} {flow.request.pretty_url} {flow.response.status_code}\\n")
"""


@pytest.fixture
def mitm(tmp_path, certificates):
    """mitmdump as a forward proxy on 127.0.0.1, trusting the throwaway CA upstream; every flow it
    answers goes to a log, one line each: method, URL, status."""
    procs = []

    def start(*extra):
        port = free_port()
        confdir, log, addon = tmp_path / "mitm", tmp_path / "flows.log", tmp_path / "log_flows.py"
        addon.write_text(LOG_FLOWS)
        log.write_text("")
        proc = subprocess.Popen([MITMDUMP, "--listen-host", "127.0.0.1", "--listen-port", str(port), "-q", "-s", str(addon),
                                 "--set", f"confdir={confdir}", "--set", f"ssl_verify_upstream_trusted_ca={certificates / 'ca.pem'}", *extra],
                                env={**os.environ, "FLOW_LOG": str(log)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(proc)

        def ready():
            """None while mitmdump starts; True once it listens and has written its CA; False if it exited."""
            if proc.poll() is not None:
                return False
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            except OSError:
                return None
            return (confdir / "mitmproxy-ca-cert.pem").exists() or None

        assert wait_until(ready, lambda v: v is not None, timeout=60, what="mitmdump listening with its CA"), \
            f"mitmdump exited with status {proc.returncode}"
        return SimpleNamespace(url=f"http://127.0.0.1:{port}", port=port, ca=confdir / "mitmproxy-ca-cert.pem",
                               flows=lambda: log.read_text().splitlines())

    yield start
    for p in procs:
        p.terminate()
        p.wait(10)


def config(tmp_path, body):
    d = tmp_path / "config" / "reiterate-shop"
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.toml").write_text(body)
    return {"XDG_CONFIG_HOME": str(tmp_path / "config")}


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "http_proxy", "ALL_PROXY"])
def test_plain_http_goes_through_the_proxy_named_in_the_environment(stub, mitm, variable):
    m = mitm()
    r = shop("print", "balance", "--base-url", stub.url, env={variable: m.url})
    assert r.returncode == 0 and "1,250 cheer" in r.stdout, r.stderr
    assert f"GET {stub.url}/api/v1/balance?user_id=qa-alice 200" in m.flows(), m.flows()


def test_https_goes_through_the_proxy_with_connect_and_its_ca(start_stub, mitm, certificates, tmp_path):
    s = start_stub("--quiet", "--tls-cert", str(certificates / "right.pem"), "--tls-key", str(certificates / "right.key"))
    m = mitm()
    # The proxy opens the TLS: the app must trust mitmproxy's CA (as QA does with Charles or Proxyman).
    env = config(tmp_path, f'[environments.tls]\nbase_url = "{s.url}"\nca_file = "{m.ca}"\n')
    r = shop("print", "balance", "--env", "tls", env={**env, "HTTPS_PROXY": m.url})
    assert r.returncode == 0 and "1,250 cheer" in r.stdout, r.stderr
    assert f"GET {s.url}/api/v1/balance?user_id=qa-alice 200" in m.flows(), m.flows()
    # Without the proxy, mitmproxy's CA is not the server's: the same config fails, and says why.
    r = shop("print", "balance", "--env", "tls", env=env)
    assert r.returncode == 69 and "TLS error" in r.stderr


def test_no_proxy_and_an_empty_config_proxy_go_direct(stub, mitm, tmp_path):
    m = mitm()
    for env in ({"HTTP_PROXY": m.url, "NO_PROXY": "localhost,127.0.0.0/8"},
                {"HTTP_PROXY": m.url, "no_proxy": "*"},
                {"HTTP_PROXY": m.url, **config(tmp_path, f'[environments.direct]\nbase_url = "{stub.url}"\nproxy = ""\n')}):
        args = ["--env", "direct"] if "XDG_CONFIG_HOME" in env else ["--base-url", stub.url]
        r = shop("print", "balance", *args, env=env)
        assert r.returncode == 0 and "cheer" in r.stdout, r.stderr
    # A marker through the proxy, logged as it passes: the runs before it went direct, or their flows
    # would be in the log before it.
    r = shop("print", "packs", "--base-url", stub.url, env={"HTTP_PROXY": m.url})
    assert r.returncode == 0, r.stderr
    assert wait_until(m.flows, timeout=10, what="the marker's flow") == [f"GET {stub.url}/api/v1/audio_packs 200"], m.flows()


def test_a_config_proxy_with_credentials_never_shows_them(stub, mitm, tmp_path):
    m = mitm("--set", "proxyauth=qa:s3cr3t-pass")  # the proxy refuses requests without these credentials
    env = config(tmp_path, f'[environments.viaproxy]\nbase_url = "{stub.url}"\nproxy = "http://qa:s3cr3t-pass@127.0.0.1:{m.port}"\n')
    log = tmp_path / "app.log"
    r = shop("print", "balance", "--env", "viaproxy", "--log-file", str(log), env={**env, "HTTP_PROXY": "http://127.0.0.1:9"})
    assert r.returncode == 0 and "cheer" in r.stdout, r.stderr  # the config's proxy wins over the variable
    assert any("/api/v1/balance" in f for f in m.flows()), m.flows()
    assert "s3cr3t-pass" not in r.stdout + r.stderr
    wrong = config(tmp_path / "wrong", f'[environments.viaproxy]\nbase_url = "{stub.url}"\nproxy = "http://qa:wr0ng-pw@127.0.0.1:{m.port}"\n')
    r = shop("print", "balance", "--env", "viaproxy", env=wrong)
    assert r.returncode == 69 and "wr0ng-pw" not in r.stderr, r.stderr  # refused by the proxy, password not echoed
    assert f"the proxy 127.0.0.1:{m.port} wants other credentials (HTTP 407)" in r.stderr, r.stderr
    r = shop("config", "check", env=env)
    line = next(l for l in r.stdout.splitlines() if l.strip().startswith("proxy") and "127.0.0.1" in l)
    assert f"http://***@127.0.0.1:{m.port}" in line and "(config file)" in line, r.stdout
    for text in (r.stdout, r.stderr, log.read_text() if log.exists() else ""):
        assert "s3cr3t-pass" not in text


def test_a_proxy_that_is_not_there_is_named_as_the_proxy(stub):
    port = free_port()  # nothing listens there
    r = shop("print", "balance", "--base-url", stub.url, "--timeout", "3", env={"HTTP_PROXY": f"http://127.0.0.1:{port}"})
    assert r.returncode == 69, r.stderr
    assert f"the proxy 127.0.0.1:{port} could not be reached" in r.stderr and "is the server running" not in r.stderr, r.stderr


def test_config_check_shows_the_proxy_from_the_environment_and_refuses_a_bad_one(stub):
    r = shop("config", "check", env={"HTTP_PROXY": "http://127.0.0.1:3128", "NO_PROXY": "example.com"})
    assert "proxy      http://127.0.0.1:3128   (environment variable HTTP_PROXY)" in r.stdout, r.stdout
    r = shop("print", "balance", "--base-url", stub.url, env={"HTTP_PROXY": "socks5://user:hunter2@127.0.0.1:1080"})
    assert r.returncode != 0 and "HTTP_PROXY is not an http://host:port proxy" in r.stderr and "hunter2" not in r.stderr, r.stderr


# ---------------------------------------------------------------------------------------------------
# An outside conformance check: schemathesis (PyPI) against the stand-in, with the contract.

SCHEMATHESIS = str(ROOT / ".venv" / "bin" / "schemathesis")
SPEC = os.environ.get("API_SPEC", str(ROOT.parent / "shared" / "api" / "reiterate-api.yaml"))


def schemathesis_run(url):
    """Every check schemathesis has, a fixed seed (the same cases each run), the server's own rules
    configured in Tests/contract/schemathesis.toml."""
    return subprocess.run([SCHEMATHESIS, "--config-file", str(ROOT / "Tests" / "contract" / "schemathesis.toml"), "run", SPEC,
                           "--url", url, "-H", "Authorization: Bearer dev-token", "--checks", "all",
                           "--max-examples", "25", "--seed", "1", "--no-color"],
                          capture_output=True, text=True, timeout=600)


def test_schemathesis_finds_every_response_conformant_and_no_5xx(start_stub):
    r = schemathesis_run(start_stub("--quiet").url)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert re.search(r"\d+ generated, \d+ passed", r.stdout), r.stdout[-2000:]


def test_schemathesis_catches_a_stand_in_that_deviates(start_stub):
    # The check can fail: a stand-in whose pack list is served as text/plain, and whose balance errs.
    s = start_stub("--quiet", "--fault", "content_type,path=/api/v1/audio_packs", "--fault", "status,status=500,path=/api/v1/balance")
    r = schemathesis_run(s.url)
    assert r.returncode != 0 and "Server error" in r.stdout and "Content-Type" in r.stdout, r.stdout[-4000:]
