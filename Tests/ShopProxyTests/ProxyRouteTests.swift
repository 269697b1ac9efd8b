import Foundation
import ShopAPI
import Testing
@testable import ShopProxy

/// What an app request through the proxy is: decided by `RequestKey.operation`, the one decider that HAR
/// files, snapshots, pins and the ledger use, so a session's traffic is read the same live and later.
@Suite struct ProxyRouteTests {
    func key(_ method: String, _ target: String) throws -> RequestKey { try #require(RequestKey(method: method, target: target)) }

    @Test func withTheBuiltInContractTheDeciderAndTheDocumentAgree() throws {
        let contract = Contract.builtIn()
        for target in ["/api/v1/balance?user_id=qa-alice", "/api/v1/audio_packs", "/api/v1/cheer_history?user_id=qa-alice&page=1&per_page=50"] {
            let k = try key("GET", target)
            #expect(ProxyCore.match(k, contract: contract) == contract.match(method: "GET", path: k.path))
            #expect(ProxyCore.match(k, contract: contract).operation == k.operation)
        }
        // A request that is no operation: the document says how it misses.
        let wrongMethod = try key("DELETE", "/api/v1/balance?user_id=qa-alice")
        #expect(ProxyCore.match(wrongMethod, contract: contract) == contract.match(method: "DELETE", path: wrongMethod.path))
        #expect(ProxyCore.match(wrongMethod, contract: contract).operation == nil)
        #expect(ProxyCore.match(try key("GET", "/api/v1/nothing-here"), contract: contract) == .unknown)
    }

    @Test func aDocumentThatMovesAPathDoesNotChangeWhatTheToolsOperationIs() throws {
        // A `--contract` document that has the balance at another path: the app's request at the tool's
        // path is still the balance read (the HAR reader and the ledger read it so too) …
        let moved = Contract(operations: [ContractOperation(operationId: OperationID.getBalance.rawValue, method: "GET", path: "/api/v9/balance",
                                                            responses: [])], error: nil, source: "test")
        let toolsPath = try key("GET", "/api/v1/balance?user_id=qa-alice")
        #expect(moved.match(method: "GET", path: toolsPath.path) != .operation(.getBalance))  // what the document alone would say
        #expect(ProxyCore.match(toolsPath, contract: moved) == .operation(.getBalance))
        #expect(ProxyCore.match(toolsPath, contract: moved).operation == toolsPath.operation)
        // … and a request on the document's own path, which no endpoint type sends, is the document's.
        let documents = try key("GET", "/api/v9/balance?user_id=qa-alice")
        #expect(documents.operation == nil)
        #expect(ProxyCore.match(documents, contract: moved) == .operation(.getBalance))
        // Without a document, a request that is no operation is unknown.
        #expect(ProxyCore.match(documents, contract: nil) == .unknown)
        #expect(ProxyCore.match(toolsPath, contract: nil) == .operation(.getBalance))
    }
}
