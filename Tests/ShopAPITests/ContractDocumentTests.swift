import ContractReader
import Foundation
import HTTPTypes
@testable import ShopAPI
import Testing

extension Contract {
    /// The built-in document as OpenAPIKit reads it now (the app starts from its kept form).
    static var bundled: Contract { (try? ContractDocument.builtIn()) ?? Contract(operations: [], error: nil, source: "unreadable") }
    static var bundledText: String { builtInText }
}

/// The contract is read from its document (OpenAPIKit), not copied by hand.
@Suite struct ContractDocumentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var sharedSpec: String {
        ProcessInfo.processInfo.environment["API_SPEC"] ?? root.deletingLastPathComponent().appendingPathComponent("shared/api/reiterate-api.yaml").path
    }

    @Test func theBuiltInCopyIsTheSharedDocument() throws {
        let shared = try String(contentsOfFile: Self.sharedSpec, encoding: .utf8)
        let copy = try String(contentsOf: Self.root.appendingPathComponent("Sources/ShopAPI/Contract/reiterate-api.yaml"), encoding: .utf8)
        #expect(copy == shared, "run `make contract` to copy ../shared/api/reiterate-api.yaml in")
        #expect(Contract.bundledText == shared)
        // And the form a session starts with is what OpenAPIKit reads of it now.
        let kept = String(decoding: PackageResources.reiterate_api_contract_json, as: UTF8.self)
        #expect(kept == Contract.bundled.keptForm(document: Contract.bundledText), "run `make contract` to write the kept form anew")
        #expect(ContractCache.read(bytes: PackageResources.reiterate_api_contract_json, source: "built in",
                                   document: ContractCache.hash(Contract.bundledText)) != nil)  // the seed is for this very text
        let seeded = Contract.builtIn()
        #expect(seeded.operations.count == Contract.bundled.operations.count && seeded.source == "built in")
    }

    @Test func theBuiltInContractReadsWithEveryOperation() {
        let contract = Contract.bundled
        #expect(contract.source == "built in")
        #expect(Set(contract.operations.map(\.operationId)) == Set(OperationID.allCases.map(\.rawValue)))
        #expect(contract.error?.required == ["message"])
    }

    /// Each endpoint names its operation once; its method and path are the document's.
    @Test func everyEndpointIsWhereTheDocumentPutsIt() {
        let endpoints: [EndpointDescription] = [AudioPacks.endpoint, Balance.endpoint, CheerHistory.endpoint, PurchaseCheer.endpoint,
                                                SpendCheer.endpoint, RefreshToken.endpoint]
        #expect(Set(endpoints.map(\.operation)) == Set(OperationID.allCases))
        for endpoint in endpoints {
            let operation = Contract.bundled.operation(endpoint.operation)
            #expect(operation?.method == endpoint.method.rawValue && operation?.path == endpoint.path, "\(endpoint.operation)")
        }
    }

    @Test func schemasKeepWhatTheDocumentSays() throws {
        let history = try #require(Contract.bundled.operation(.getCheerHistory)?.response(for: 200)?.schema)
        let entry = try #require(history.properties?["history"]?.items)
        #expect(entry.required == ["amount", "creator", "date", "product"])
        #expect(entry.properties?["date"]?.format == "date-time")
        #expect(entry.properties?["comments"]?.type == ["array", "null"])
        #expect(entry.properties?["comments"]?.items?.properties?["signature"]?.type == ["string", "null"])
        #expect(history.properties?["page"]?.minimum == 1)
        // `default` answers errors only; 402 is spendCheer's own.
        let spend = try #require(Contract.bundled.operation(.spendCheer))
        #expect(spend.declares(402) && spend.declares(500) && !spend.declares(201) && !spend.declares(304))
    }

    @Test func anotherVersionOfTheDocumentChangesTheChecksWithoutARebuild() throws {
        let changed = Contract.bundledText.replacingOccurrences(of: "balance: { type: integer, description: Cheer units; may be 0. }",
                                                                with: "balance: { type: string, maximum: 10 }")
        #expect(changed != Contract.bundledText)
        let contract = try ContractDocument.read(changed, source: "test")
        var watchdog = ContractWatchdog(contract: contract)
        let findings = watchdog.check(ObservedExchange(operation: .getBalance, pathAndQuery: "/api/v1/balance?user_id=qa-alice", status: 200,
                                                       headers: [.contentType: "application/json", .requestID: "rq-1"], body: Array(#"{"balance":1250}"#.utf8)))
        #expect(findings.map(\.line) == ["[schema] expected balance: string, got integer 1250"])
    }

    @Test func aDocumentThatCannotBeUsedSaysWhyInOneLine() {
        for (text, words) in [("openapi: 3.1.0\ninfo: [", "is not an OpenAPI 3.1 document"),
                              ("openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths:\n  /x:\n    get:\n      responses:\n        '200': { $ref: '#/components/responses/Nope' }\n",
                               "reference that does not resolve")] {
            #expect(throws: ContractDocument.LoadError.self) { try ContractDocument.read(text, source: "bad.yaml") }
            do {
                _ = try ContractDocument.read(text, source: "bad.yaml")
            } catch {
                #expect(error.description.contains(words) && !error.description.contains("\n"), "\(error.description)")
                #expect(!error.description.contains("Error") && !error.description.contains("Swift."), "\(error.description)")
            }
        }
        #expect(throws: ContractDocument.LoadError.self) { try ContractDocument.load(file: "/nonexistent/contract.yaml") }
    }

    /// Another document is read by `reiterate-contract` (the app links no OpenAPIKit) and kept on
    /// disk, where it reads back the same by the project's parser; a cut or foreign file is ignored
    /// and written anew; the reader's refusal is one line.
    /// Runs the reader process off the test pool's threads (waiting on a process would hold one of
    /// the two, and time out the timing tests running beside it).
    @Test func anotherDocumentIsReadByTheReaderAndKept() async throws {
        try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
            DispatchQueue.global().async { done.resume(with: Result { try Self.readerRoundTrip() }) }
        }
    }

    static func readerRoundTrip() throws {
        let reader = Self.root.appendingPathComponent(".build/debug/reiterate-contract").path
        try #require(FileManager.default.isExecutableFile(atPath: reader), "swift build first")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("contract-cache-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        func json(_ c: Contract) throws -> String {
            struct Dump: Encodable { var operations: [ContractOperation]; var error: ContractSchema? }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return String(decoding: try encoder.encode(Dump(operations: c.operations, error: c.error)), as: UTF8.self)
        }
        let document = folder + "/api.yaml"
        try Contract.bundledText.write(toFile: document, atomically: true, encoding: .utf8)
        let first = try ContractLoader.load(file: document, cacheDirectory: folder, reader: reader)
        #expect(try first.source == document && json(first) == json(.bundled))
        let file = ContractCache.path(for: Contract.bundledText, in: folder)
        let kept = try #require(ContractCache.read(file, source: "x"))
        #expect(try json(kept) == json(.bundled))
        // Read back from the cache: no reader needed any more.
        #expect(try json(ContractLoader.load(file: document, cacheDirectory: folder, reader: "/nonexistent")) == json(.bundled))
        try Data("{\"format\":1,\"operations\":[{\"operationId\":".utf8).write(to: URL(fileURLWithPath: file))
        #expect(ContractCache.read(file, source: "x") == nil)
        #expect(try json(ContractLoader.load(file: document, cacheDirectory: folder, reader: reader)) == json(.bundled))
        #expect(ContractCache.read(file, source: "x") != nil)  // written anew
        // The reader's refusal, in the app's words; and no reader at all.
        try "openapi: 3.1.0\ninfo: [".write(toFile: document, atomically: true, encoding: .utf8)
        for (path, words) in [(reader, "is not an OpenAPI 3.1 document"), ("/nonexistent/reiterate-contract", "is not installed beside reiterate-shop")] {
            do {
                _ = try ContractLoader.load(file: document, cacheDirectory: folder, reader: path)
                Issue.record("read")
            } catch {
                #expect(error.description.contains(words) && !error.description.contains("\n") && !error.description.hasPrefix("error:"), "\(error.description)")
            }
        }
    }
}
