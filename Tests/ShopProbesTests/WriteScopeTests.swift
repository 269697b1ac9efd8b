import Foundation
import ShopAPI
import ShopViewModels
import Testing
@testable import ShopProbes

/// Which findings are a write's (out of the executable, issue 44, item 5): its own answer's and every
/// balance read's; for a spend, the history's newest entry and the pack spent on; the rest are other reads'.
@Suite struct WriteScopeTests {
    static func exchange(_ operation: OperationID, _ paths: [String]) -> Exchange {
        let endpoint = EndpointDescription.all.first { $0.operation == operation }
        var e = Exchange(id: 0, method: endpoint?.method.rawValue ?? "GET", path: endpoint?.path ?? "/", startedAt: Date(), duration: .zero, status: 200,
                         failure: nil, requestID: "rq", attempt: 1, requestBytes: 0, responseBytes: 0, requestHeaders: [:], responseHeaders: [:],
                         requestBodyPreview: nil, responseBodyPreview: nil)
        e.operation = operation
        e.findings = paths.map { Finding(check: .schema, expected: "x", actual: "y", place: .field(path: $0, rule: .type)) }
        return e
    }

    @Test func aSpendOwnsItsNewestEntryAndItsPackAPurchaseNeither() {
        let packs = AudioPackList(packs: [AudioPack(identifier: "a", name: "A"), AudioPack(identifier: "rain", name: "Rain")], unreadable: [])
        let spend = WriteScope(kind: .spend(.init(product: "rain", amount: 3)), packs: packs)
        let history = Self.exchange(.getCheerHistory, ["history[0].amount", "history[4].amount"])
        let list = Self.exchange(.listAudioPacks, ["packs[1].name", "packs[0].name"])
        let balance = Self.exchange(.getBalance, ["balance"])
        let (own, others) = spend.split([history, list, balance])
        #expect(own.map { $0.findings.count } == [1, 1, 1] && others.map { $0.findings.count } == [1, 1, 0])
        #expect(own[1].findings.first?.place == .field(path: "packs[1].name", rule: .type))  // Rain is second in the list sent
        let buy = WriteScope(kind: .purchase(.init(identifier: "com.reiterate.cheer.50", transactionID: 7)), packs: packs)
        #expect(buy.split([history, list, balance]).own.map { $0.findings.count } == [0, 0, 1])
    }
}
