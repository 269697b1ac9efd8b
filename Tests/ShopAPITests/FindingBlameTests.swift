import ContractReader
import Foundation
import HTTPTypes
import JSONTokens
@testable import ShopAPI
import Testing

/// Every finding carries its blame: the app's for its request, the server's for its answer.
@Suite struct FindingBlameTests {
    static let page = #"{"history":[],"page":1,"per_page":500,"total_pages":0,"total_count":0}"#

    /// A history request asking 500 a page, answered with no `X-Request-Id`: one deviation each side.
    func exchange(_ source: ExchangeSource, operation: OperationID? = nil, answered: Bool = true,
                  key: RequestKey = RequestKey(.get, "/api/v1/cheer_history", query: [.init("user_id", "qa-alice"), .init("per_page", "500")])) -> HTTPExchange {
        // An app's request is matched from its method and path when the exchange is made (as the proxy does).
        let match = source == .app ? Contract.builtIn().match(method: key.method.rawValue, path: key.path) : operation.map(RequestMatch.operation) ?? .unknown
        var e = HTTPExchange(serial: 1, source: source, request: ExchangeRequest(key: key, match: match, headers: [:], body: nil), attempt: 1)
        if answered {
            let body = Array(Self.page.utf8)
            e.response = ExchangeResponse(status: 200, headers: [.contentType: "application/json"], body: body, tokens: JSONTokenizer.tokens(body))
        }
        return e
    }

    @Test func anAppsExchangeHasTheAppsFindingsFirstThenTheServers() async {
        let found = await WatchdogObserver().finished(exchange(.app))  // its operation found from the path when made
        #expect(found.map(\.check) == [.requestParameter, .requestID])
        #expect(found.map(\.blame) == [.app, .server])
    }

    @Test func theToolsOwnRequestsAreNotHeldToTheContract() async {
        let found = await WatchdogObserver().finished(exchange(.tool, operation: .getCheerHistory))
        #expect(found.map(\.check) == [.requestID] && found.allSatisfy { $0.blame == .server })
        // As before: a tool's exchange with no operation, or no answer, is not checked at all.
        #expect(await WatchdogObserver().finished(exchange(.tool)).isEmpty)
        #expect(await WatchdogObserver().finished(exchange(.tool, operation: .getCheerHistory, answered: false)).isEmpty)
    }

    @Test func anAppsRequestIsCheckedEvenWithNoAnswer() async {
        let found = await WatchdogObserver().finished(exchange(.app, answered: false))
        #expect(found.map(\.line) == ["[request-parameter] expected per_page ≤ 200, got 500"] && found.first?.blame == .app)
    }

    @Test func anAnswerOnAPathTheContractDoesNotHaveIsNotHeldToAnothersSchema() async {
        let v2 = RequestKey(.get, "/api/v2/cheer_history", query: [.init("user_id", "qa-alice")])
        #expect(await WatchdogObserver().finished(exchange(.app, key: v2)).map(\.check) == [.requestVersion])
        // Not the shop's request at all: nothing.
        #expect(await WatchdogObserver().finished(exchange(.app, key: RequestKey(.get, "/images/rain.png"))).isEmpty)
    }

    @Test func aRequestFindingAndAnAnswerFindingAreNeverOne() {
        let server = Finding(check: .schema, expected: "x", actual: "y", place: .field(path: "amount", rule: .type))
        var app = server
        app.blame = .app
        let target = "/api/v1/spend_cheer"
        #expect(FindingKey(server, method: "POST", target: target) != FindingKey(app, method: "POST", target: target))
        var record = Exchange(id: 1, method: "POST", path: target, startedAt: Date(), duration: .zero, status: 200, failure: nil, requestID: "rq-1",
                              attempt: 1, requestBytes: 0, responseBytes: 0, requestHeaders: [:], responseHeaders: [:], requestBodyPreview: nil, responseBodyPreview: nil)
        record.findings = [app, server]
        #expect(FindingGroup.of([record, record]).map(\.count) == [2, 2])
    }

    @Test func aParameterFindingIsTheOperationsWhateverTheRestOfTheQuery() {
        let finding = Finding(check: .requestParameter, expected: "per_page ≤ 200", actual: "500", place: .parameter(name: "per_page", rule: .maximum), blame: .app)
        let other = Finding(check: .requestParameter, expected: "per_page ≤ 200", actual: "300", place: .parameter(name: "per_page", rule: .maximum), blame: .app)
        #expect(FindingKey(finding, method: "GET", target: "/api/v1/cheer_history?user_id=a&page=1&per_page=500")
            == FindingKey(other, method: "GET", target: "/api/v1/cheer_history?user_id=a&page=2&per_page=300"))
    }

    @Test func aFindingSavedWithoutItsBlameReadsAsTheServers() throws {
        let old = #"{"check":"schema","expected":"balance: integer","actual":"string","place":{"header":{"_0":"X-Request-Id"}}}"#
        let read = try JSONDecoder().decode(Finding.self, from: Data(old.utf8))
        #expect(read.blame == .server && read.check == .schema && read.place == .header("X-Request-Id"))
        let app = Finding(check: .requestBody, expected: "a JSON body", actual: "none", blame: .app)
        let data = try JSONEncoder().encode(app)
        #expect(String(decoding: data, as: UTF8.self).contains(#""blame":"app""#))
        #expect(try JSONDecoder().decode(Finding.self, from: data) == app)
    }

    @Test func theHARKeepsEachFindingsBlame() throws {
        var record = Exchange(id: 1, method: "GET", path: "/api/v1/balance", startedAt: Date(), duration: .zero, status: 200, failure: nil, requestID: "rq-1",
                              attempt: 1, requestBytes: 0, responseBytes: 0, requestHeaders: [:], responseHeaders: [:], requestBodyPreview: nil, responseBodyPreview: nil)
        record.findings = [Finding(check: .requestParameter, expected: "e", actual: "a", blame: .app), Finding(check: .requestID, expected: "e", actual: "a")]
        let har = try JSONSerialization.jsonObject(with: HAR.encode([record], baseURL: "http://x", creator: "t", version: "1")) as? [String: Any]
        let entries = (har?["log"] as? [String: Any])?["entries"] as? [[String: Any]]
        let findings = entries?.first?["_findings"] as? [[String: Any]]
        #expect(findings?.compactMap { $0["blame"] as? String } == ["app", "server"])
    }

    // MARK: the contract's request side, read and kept

    @Test func theRequestSideIsReadFromTheDocument() throws {
        let contract = Contract.bundled
        let history = try #require(contract.operation(.getCheerHistory))
        #expect(history.parameters.map(\.name) == ["user_id", "page", "per_page"])
        #expect(history.parameters.map(\.required) == [true, false, false] && history.parameters.allSatisfy { $0.location == .query })
        #expect(history.parameters.first?.schema?.minLength == 1)  // #/components/parameters/UserID, resolved
        #expect(history.parameters.last?.schema?.maximum == 200 && history.requestBody == nil)
        let buy = try #require(contract.operation(.purchaseCheer)?.requestBody)
        #expect(buy.required && buy.contentTypes == ["application/json"] && buy.schema?.required == ["identifier", "transaction_id"])
        #expect(buy.schema?.properties?["transaction_id"]?.format == "uint64")
    }

    @Test func anOperationsOwnParameterReplacesThePathItemsAndIgnoredHeadersAreLeftOut() throws {
        let text = """
            openapi: 3.1.0
            info: {title: t, version: '1'}
            paths:
              /api/v1/balance:
                parameters:
                  - {name: user_id, in: query, schema: {type: string}}
                  - {name: X-Trace, in: header, required: true, schema: {type: string}}
                get:
                  operationId: getBalance
                  parameters:
                    - {name: user_id, in: query, required: true, schema: {type: string, minLength: 2}}
                    - {name: Authorization, in: header, required: true, schema: {type: string}}
                  responses:
                    '200': {description: ok}
            """
        let operation = try #require(try ContractDocument.read(text, source: "test").operation(.getBalance))
        #expect(operation.parameters.map(\.name) == ["X-Trace", "user_id"])
        #expect(operation.parameters.last?.required == true && operation.parameters.last?.schema?.minLength == 2)
        let conformance = RequestConformance(contract: try ContractDocument.read(text, source: "test"))
        let findings = conformance.check(method: "GET", path: "/api/v1/balance", query: [.init("user_id", "a")], headers: [:], body: nil)
        #expect(findings.map(\.line) == ["[request-parameter] expected the header parameter X-Trace (required), got missing",
                                         "[request-parameter] expected user_id of at least 2 characters, got “a”"])
    }

    @Test func theKeptFormHoldsTheRequestSide() throws {
        let text = Contract.bundledText
        let kept = try #require(ContractCache.encode(Contract.bundled, document: text))
        let read = try #require(ContractCache.read(bytes: Array(kept), source: "kept", document: ContractCache.hash(text)))
        #expect(ContractCache.encode(read, document: text) == kept)  // nothing lost on the way back
        #expect(read.operation(.getCheerHistory)?.parameters.last?.schema?.maximum == 200)
        #expect(read.operation(.spendCheer)?.requestBody?.schema?.properties?["amount"]?.minimum == 1)
        #expect(read.operation(.refreshToken)?.requestBody?.required == true)
        #expect(read.operation(.refreshToken)?.requiresAuth == false && read.operation(.getBalance)?.requiresAuth == true)
        #expect(read.operation(.getCheerHistory)?.parameters.last?.schema?.defaultNumber == 50)
        // A kept form from before the request side (format 2), or before each operation's token (3), is not read: it
        // is read from the document again.
        for format in [2, 3] {
            let older = String(decoding: kept, as: UTF8.self).replacingOccurrences(of: #""format" : 4"#, with: "\"format\" : \(format)")
            #expect(older != String(decoding: kept, as: UTF8.self))
            #expect(ContractCache.read(bytes: Array(older.utf8), source: "kept", document: nil) == nil)
        }
        // A parameter that does not read makes the whole file not read (no check is better than a wrong one).
        let broken = String(decoding: kept, as: UTF8.self).replacingOccurrences(of: #""in" : "query""#, with: #""in" : "body""#)
        #expect(ContractCache.read(bytes: Array(broken.utf8), source: "kept", document: nil) == nil)
    }
}
