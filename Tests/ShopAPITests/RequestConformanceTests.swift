import ContractReader
import Foundation
import HTTPTypes
@testable import ShopAPI
import Testing

/// The app's requests held to the contract: each check passes a request that keeps it and finds one
/// that breaks it, blamed on the app.
@Suite struct RequestConformanceTests {
    let conformance = RequestConformance(contract: .builtIn())
    let json: HTTPFields = [.contentType: "application/json; charset=utf-8"]

    func check(_ method: String, _ target: String, headers: HTTPFields = [:], body: String? = nil) -> [Finding] {
        let key = RequestKey(method: "GET", target: target)
        return conformance.check(method: method, path: key?.path ?? target, query: key?.query ?? [], headers: headers, body: body.map { Array($0.utf8) })
    }

    @Test func anOperationIsFoundByItsMethodAndPath() {
        let contract = Contract.builtIn()
        #expect(contract.match(method: "GET", path: "/api/v1/cheer_history") == .operation(.getCheerHistory))
        #expect(contract.match(method: "post", path: "/api/v2/purchase_cheer") == .operation(.purchaseCheer))
        #expect(contract.match(method: "POST", path: "/api/v1/purchase_cheer") == .otherVersion(.purchaseCheer, expectedPath: "/api/v2/purchase_cheer"))
        #expect(contract.match(method: "GET", path: "/api/v3/balance") == .otherVersion(.getBalance, expectedPath: "/api/v1/balance"))
        #expect(contract.match(method: "GET", path: "/api/v1/spend_cheer") == .wrongMethod(.spendCheer, expected: "POST"))
        #expect(contract.match(method: "GET", path: "/api/v1/gifts") == .unknown)
        #expect(contract.match(method: "GET", path: "/api/v1/balance/") == .unknown)  // the document's path has no trailing slash
        #expect(contract.match(method: "GET", path: "/api/vx/balance") == .unknown)  // not a version segment
    }

    @Test func aTemplatedSegmentMatchesAnyOneSegment() throws {
        let text = "openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /api/v1/packs/{id}:\n    get:\n      operationId: listAudioPacks\n"
            + "      responses:\n        '200': { description: ok }\n"
        let contract = try ContractDocument.read(text, source: "test")
        #expect(contract.match(method: "GET", path: "/api/v1/packs/rain") == .operation(.listAudioPacks))
        #expect(contract.match(method: "GET", path: "/api/v2/packs/rain") == .otherVersion(.listAudioPacks, expectedPath: "/api/v1/packs/{id}"))
        #expect(contract.match(method: "GET", path: "/api/v1/packs/") == .unknown)
    }

    @Test func everyRequestOfTheToolsOwnClientKeepsTheContract() throws {
        let requests: [(RequestKey, [UInt8]?)] = [
            (AudioPacks().requestKey, nil), (Balance(user: "qa-alice").requestKey, nil),
            (CheerHistory(user: "qa-alice", page: 2, perPage: 200).requestKey, nil),
            (PurchaseCheer(identifier: "com.reiterate.cheer.200", transactionID: .max).requestKey,
             try PurchaseCheer(identifier: "com.reiterate.cheer.200", transactionID: .max).body()),
            (SpendCheer(amount: 1, product: "p", comment: "c", user: "qa-alice").requestKey, try SpendCheer(amount: 1, product: "p", comment: "c").body()),
            (RefreshToken(refreshToken: "r").requestKey, try RefreshToken(refreshToken: "r").body()),
        ]
        for (key, body) in requests {
            // Matched from its method and path, as the proxy matches an app's request when it makes the exchange.
            let match = Contract.builtIn().match(method: key.method.rawValue, path: key.path)
            let findings = conformance.check(ExchangeRequest(key: key, match: match, headers: body == nil ? [:] : json, body: body))
            #expect(findings.isEmpty, "\(key): \(findings.map(\.line))")
        }
    }

    @Test func aPathOnAnotherVersionIsTheApps() {
        #expect(check("POST", "/api/v2/purchase_cheer", headers: json, body: #"{"identifier":"i","transaction_id":1}"#).isEmpty)
        let findings = check("POST", "/api/v1/purchase_cheer", headers: json, body: #"{"identifier":"i"}"#)
        #expect(findings.map(\.line) == ["[request-version] expected /api/v2/purchase_cheer (purchaseCheer), got /api/v1/purchase_cheer",
                                         "[request-body] expected transaction_id (required), got missing"])  // still held to its operation
        #expect(findings.allSatisfy { $0.blame == .app })
    }

    @Test func aPathUnderTheAPIThatTheContractDoesNotHaveIsAFindingAndOneElsewhereIsNotTheShops() {
        let findings = check("GET", "/api/v1/gifts?user_id=qa-alice")
        #expect(findings.map(\.line) == ["[request-path] expected a path of the contract, got GET /api/v1/gifts"])
        #expect(findings.first?.blame == .app)
        #expect(check("GET", "/images/rain.png").isEmpty && check("GET", "/").isEmpty && check("GET", "/apix/v1/balance").isEmpty)
    }

    @Test func aMethodTheOperationDoesNotTakeIsAFinding() {
        #expect(check("GET", "/api/v1/spend_cheer").map(\.line) == ["[request-method] expected POST (spendCheer), got GET"])
        // Another version and another method: both said.
        #expect(check("GET", "/api/v2/spend_cheer").map(\.check) == [.requestVersion, .requestMethod])
    }

    @Test func aRequiredQueryParameterMustBeThere() {
        #expect(check("GET", "/api/v1/balance?user_id=qa-alice").isEmpty)
        let missing = check("GET", "/api/v1/balance")
        #expect(missing.map(\.line) == ["[request-parameter] expected the query parameter user_id (required), got missing"])
        #expect(missing.first?.place == .parameter(name: "user_id", rule: .required))
        #expect(check("GET", "/api/v1/balance?user_id=").map(\.line) == ["[request-parameter] expected user_id of at least 1 character, got “”"])
    }

    @Test func pageAndPerPageKeepTheirBounds() {
        #expect(check("GET", "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=200").isEmpty)
        #expect(check("GET", "/api/v1/cheer_history?user_id=qa-alice").isEmpty)  // both optional
        let findings = check("GET", "/api/v1/cheer_history?user_id=qa-alice&page=0&per_page=500")
        #expect(findings.map(\.line) == ["[request-parameter] expected page ≥ 1, got 0", "[request-parameter] expected per_page ≤ 200, got 500"])
        #expect(findings.map(\.place) == [.parameter(name: "page", rule: .minimum), .parameter(name: "per_page", rule: .maximum)])
        #expect(check("GET", "/api/v1/cheer_history?user_id=qa-alice&per_page=0").map(\.expected) == ["per_page ≥ 1"])
        #expect(check("GET", "/api/v1/cheer_history?user_id=qa-alice&page=two&per_page=2.5").map(\.line)
            == ["[request-parameter] expected page: integer, got “two”", "[request-parameter] expected per_page: integer, got “2.5”"])
    }

    @Test func aJSONBodyIsLabelledJSON() {
        let body = #"{"amount":1,"product":"p"}"#
        #expect(check("POST", "/api/v1/spend_cheer", headers: [.contentType: "application/json"], body: body).isEmpty)
        let findings = check("POST", "/api/v1/spend_cheer", headers: [.contentType: "text/plain"], body: body)
        #expect(findings.map(\.line) == ["[request-content-type] expected application/json, got “text/plain”"])
        #expect(findings.first?.place == .header("Content-Type"))
        #expect(check("POST", "/api/v1/spend_cheer", body: body).map(\.actual) == ["none"])
    }

    @Test func theBodyIsJSONThatTheSchemaAllows() {
        #expect(check("POST", "/api/v1/spend_cheer", headers: json, body: #"{"amount":5,"product":"p","comment":"yay","extra":1}"#).isEmpty)
        let wrong = check("POST", "/api/v1/spend_cheer", headers: json, body: #"{"amount":0,"comment":7}"#)
        #expect(wrong.map(\.line) == ["[request-body] expected product (required), got missing", "[request-body] expected amount ≥ 1, got 0",
                                      "[request-body] expected comment: string, got integer 7"])
        #expect(wrong.map(\.place) == [.field(path: "product", rule: .required), .field(path: "amount", rule: .minimum), .field(path: "comment", rule: .type)])
        #expect(check("POST", "/api/v1/spend_cheer", headers: json, body: "amount=5").map(\.line)
            == ["[request-body] expected a JSON body, got a body that is not JSON (8 bytes)"])
    }

    @Test func aRequiredBodyMustBeThere() {
        let findings = check("POST", "/api/v1/auth/refresh", headers: json)
        #expect(findings.map(\.line) == ["[request-body] expected a body (required): application/json, got none"])
        #expect(check("POST", "/api/v1/auth/refresh", headers: json, body: "").map(\.check) == [.requestBody])
        #expect(check("POST", "/api/v1/auth/refresh", headers: json, body: #"{"refresh_token":"r"}"#).isEmpty)
    }

    @Test func aTransactionIDIsAnyUnsigned64BitNumber() {
        func buy(_ id: String) -> [String] {
            check("POST", "/api/v2/purchase_cheer", headers: json, body: #"{"identifier":"i","transaction_id":\#(id)}"#).map(\.line)
        }
        #expect(buy("18446744073709551615").isEmpty && buy("0").isEmpty)
        #expect(buy("18446744073709551616") == ["[request-body] expected transaction_id: integer (64-bit), got 18446744073709551616, beyond a 64-bit integer"])
        #expect(buy("-1") == ["[request-body] expected transaction_id ≥ 0 (uint64), got -1"])
        #expect(buy("1.5") == ["[request-body] expected transaction_id: integer, got number 1.5"])
    }
}
