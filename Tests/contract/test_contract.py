"""Contract check: every operation of the stand-in is called, and every response (success and error)
is validated against the schemas of ../shared/api/reiterate-api.yaml with openapi-core."""
import pytest
import yaml
from openapi_core import OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse

from conftest import SPEC_PATH

def spec_operations():
    with open(SPEC_PATH, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    return spec, {op["operationId"]: (method.upper(), path)
                  for path, item in spec["paths"].items() for method, op in item.items()}


@pytest.fixture(scope="module")
def openapi(shared_stub):
    spec, _ = spec_operations()
    spec["servers"] = [{"url": shared_stub.url}]
    return OpenAPI.from_dict(spec)


def check(openapi, response, operation, status):
    assert response.status_code == status, response.text
    assert response.headers.get("X-Request-Id"), "every response carries X-Request-Id"
    openapi.validate_response(RequestsOpenAPIRequest(response.request), RequestsOpenAPIResponse(response))
    return response.json()


# One successful call per operation of the contract; `test_success_table_covers_the_contract` keeps
# this table in step with the YAML, so an operation added there fails here until it is called.
SUCCESS_CALLS = {
    "listAudioPacks": ("GET", "/api/v1/audio_packs", {}),
    "getBalance": ("GET", "/api/v1/balance", {"params": {"user_id": "qa-alice"}}),
    "getCheerHistory": ("GET", "/api/v1/cheer_history", {"params": {"user_id": "qa-alice", "page": 2, "per_page": 20}}),
    "purchaseCheer": ("POST", "/api/v2/purchase_cheer", {"json": {"identifier": "com.reiterate.cheer.100", "transaction_id": 99}}),
    "spendCheer": ("POST", "/api/v1/spend_cheer", {"json": {"amount": 5, "product": "com.reiterate.pack.rain"}}),
    "refreshToken": ("POST", "/api/v1/auth/refresh", {"json": {"refresh_token": "dev-refresh"}, "token": None}),
}


def test_success_table_covers_the_contract():
    _, operations = spec_operations()
    assert {op: (m, p) for op, (m, p, _) in SUCCESS_CALLS.items()} == operations


@pytest.mark.parametrize("operation", sorted(SUCCESS_CALLS))
def test_every_operation_succeeds_per_contract(stub, openapi, operation):
    method, path, kw = SUCCESS_CALLS[operation]
    check(openapi, stub.request(method, path, **kw), operation, 200)


def test_list_audio_packs(stub, openapi):
    body = check(openapi, stub.get("/api/v1/audio_packs"), "listAudioPacks", 200)
    assert len(body["packs"]) >= 40


def test_list_audio_packs_unauthorized(stub, openapi):
    body = check(openapi, stub.get("/api/v1/audio_packs", token=None), "listAudioPacks", 401)
    assert body["code"] == "unauthorized"


@pytest.mark.parametrize("user,status", [("qa-alice", 200), ("qa-empty", 200), ("qa-whale", 200), ("qa-ghost", 404)])
def test_get_balance(stub, openapi, user, status):
    check(openapi, stub.get("/api/v1/balance", params={"user_id": user}), "getBalance", status)


def test_get_balance_without_user(stub, openapi):
    body = check(openapi, stub.get("/api/v1/balance"), "getBalance", 400)
    assert "user_id" in body["message"]


@pytest.mark.parametrize("params,status", [
    ({"user_id": "qa-alice"}, 200),
    ({"user_id": "qa-alice", "page": 5, "per_page": 50}, 200),
    ({"user_id": "qa-alice", "page": 99}, 200),
    ({"user_id": "qa-empty"}, 200),
    ({"user_id": "qa-whale", "page": 500, "per_page": 200}, 200),
    ({"user_id": "qa-alice", "per_page": 201}, 400),
    ({"user_id": "qa-alice", "page": 0}, 400),
    ({"user_id": "qa-alice", "page": "two"}, 400),
    ({"user_id": "qa-ghost"}, 404),
])
def test_get_cheer_history(stub, openapi, params, status):
    check(openapi, stub.get("/api/v1/cheer_history", params=params), "getCheerHistory", status)


def test_purchase_cheer(stub, openapi):
    body = {"identifier": "com.reiterate.cheer.200", "transaction_id": 18446744073709551615}
    assert check(openapi, stub.post("/api/v2/purchase_cheer", json=body), "purchaseCheer", 200) == {"balance": 1450}
    assert check(openapi, stub.post("/api/v2/purchase_cheer", json=body), "purchaseCheer", 409)["code"] == "duplicate_transaction"
    bad = {"identifier": "com.reiterate.cheer.3", "transaction_id": 1}
    assert check(openapi, stub.post("/api/v2/purchase_cheer", json=bad), "purchaseCheer", 400)["code"] == "unknown_product"


def test_spend_cheer(stub, openapi):
    pack = stub.get("/api/v1/audio_packs").json()["packs"][0]["identifier"]
    ok = {"amount": 50, "product": pack, "comment": "Lovely"}
    assert check(openapi, stub.post("/api/v1/spend_cheer", json=ok), "spendCheer", 200) == {"balance": 1200}
    poor = {"amount": 5000, "product": pack}
    assert check(openapi, stub.post("/api/v1/spend_cheer", json=poor), "spendCheer", 402)["code"] == "insufficient_balance"
    assert check(openapi, stub.post("/api/v1/spend_cheer", data="{oops", headers={"Content-Type": "application/json"}),
                 "spendCheer", 400)["code"] == "invalid_json"


def test_refresh_token(stub, openapi):
    body = check(openapi, stub.post("/api/v1/auth/refresh", token=None, json={"refresh_token": "dev-refresh"}),
                 "refreshToken", 200)
    assert body["access_token"] and body["refresh_token"] != "dev-refresh"
    assert check(openapi, stub.post("/api/v1/auth/refresh", token=None, json={"refresh_token": "dev-refresh"}),
                 "refreshToken", 401)["code"] == "invalid_refresh_token"


def test_injected_errors_follow_the_error_schema(stub, openapi):
    stub.fault(kind="status", status=503, retry_after=3, count=1, path="/api/v1/balance")
    r = stub.get("/api/v1/balance", params={"user_id": "qa-alice"})
    assert check(openapi, r, "getBalance", 503)["code"] == "injected_fault"
    assert r.headers["Retry-After"] == "3"
    stub.fault(kind="rate_limit", count=1, path="/api/v1/cheer_history")
    r = stub.get("/api/v1/cheer_history", params={"user_id": "qa-alice"})
    assert check(openapi, r, "getCheerHistory", 429)["code"] == "rate_limited"

