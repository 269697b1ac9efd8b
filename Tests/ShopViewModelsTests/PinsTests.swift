import Foundation
import JSONTokens
import ShopAPI
import ShopCompare
import Testing
@testable import ShopViewModels

/// Pins: `P` on a Requests row pins its answer; every later answer to the same request is checked
/// against it (a finding `pinned`), under the ignore rules; the pins are kept in a file.
@Suite struct PinsTests {
    static let request = RequestKey(.get, "/api/v1/balance", query: [.init("user_id", "qa-alice")])

    static func exchange(_ id: Int, method: String = "GET", path: String = "/api/v1/balance?user_id=qa-alice", status: Int? = 200, body: String?) -> Exchange {
        Exchange(id: id, method: method, path: path, startedAt: t0, duration: .milliseconds(5), status: status, failure: nil, requestID: "rq-\(id)",
                 attempt: 1, requestBytes: 0, responseBytes: body?.utf8.count ?? 0, requestHeaders: [:], responseHeaders: [:],
                 requestBodyPreview: nil, responseBodyPreview: body)
    }

    static func check(_ store: PinStore, _ body: String, status: Int = 200, path: String = "/api/v1/balance?user_id=qa-alice", requestID: String? = nil) async -> [Finding] {
        let bytes = Array(body.utf8)
        return await store.check(RequestKey(method: "GET", target: path)!, status: status, body: bytes, tokens: JSONTokenizer.tokens(bytes), requestID: requestID)
    }

    @Test func aLaterAnswerThatDiffersIsAFindingUnderTheIgnoreRules() async throws {
        let store = PinStore(path: nil)
        try await store.add(Pin(request: Self.request, body: .object(["balance": .int(1250)]), requestID: "rq-1", pinnedAt: t0))
        #expect(await Self.check(store, #"{"balance":1250}"#).isEmpty)
        // One answer that differs is not a verdict: it waits for the next read.
        #expect(await Self.check(store, #"{"balance":1243}"#, requestID: "rq-7").isEmpty)
        #expect(await store.unsettled == [Self.request])
        let found = await Self.check(store, #"{"balance":1243}"#, requestID: "rq-8")
        #expect(found.count == 1 && found[0].check == .pinned)
        #expect(found.first?.actual == "1 difference: 1 changed — changed balance.balance 1250 → 1243 (the same in two answers in a row: rq-7, rq-8)"
                && found.first?.expected.contains("(request id rq-1)") == true)
        #expect(await store.unsettled.isEmpty)
        // Another request, an error answer: not held to this pin.
        #expect(await Self.check(store, #"{"balance":1243}"#, path: "/api/v1/balance?user_id=qa-bob").isEmpty)
        #expect(await Self.check(store, #"{"message":"down"}"#, status: 503).isEmpty)
        let lenient = PinStore(path: nil, ignore: try IgnoreRules(["balance.balance"]))
        try await lenient.add(Pin(request: Self.request, body: .object(["balance": .int(1250)]), requestID: nil, pinnedAt: t0))
        #expect(await Self.check(lenient, #"{"balance":1243}"#).isEmpty)
    }

    /// Issue 35: a pin is judged on settled reads. A difference seen once and then gone (a replica that
    /// lags) is no finding; three answers each unlike the one before are "not judged", told once.
    @Test func aPinIsJudgedOnTwoAnswersInARowThatAgree() async throws {
        let store = PinStore(path: nil)
        try await store.add(Pin(request: Self.request, body: .object(["balance": .int(1250)]), requestID: "rq-1", pinnedAt: t0))
        #expect(await Self.check(store, #"{"balance":1243}"#).isEmpty)
        #expect(await Self.check(store, #"{"balance":1250}"#).isEmpty)   // back to the pin: the flip was a stale read
        #expect(await store.unsettled.isEmpty)
        #expect(await Self.check(store, #"{"balance":1243}"#).isEmpty)
        #expect(await Self.check(store, #"{"balance":1250}"#).isEmpty)
        // Moving every read: not judged, one finding naming each read.
        #expect(await Self.check(store, #"{"balance":1}"#, requestID: "rq-a").isEmpty)
        #expect(await Self.check(store, #"{"balance":2}"#, requestID: "rq-b").isEmpty)
        let moving = await Self.check(store, #"{"balance":3}"#, requestID: "rq-c")
        #expect(moving.map(\.check) == [.readsDisagree] && moving.first?.actual.contains("request ids rq-a, rq-b, rq-c") == true)
        #expect(await store.unsettled.isEmpty)  // as far as reading goes: `confirm` does not read it again
        #expect(await store.unsettled.isEmpty)  // the reading starts afresh
        // The same difference twice: judged, and reported once however often it is read.
        #expect(await Self.check(store, #"{"balance":3}"#).isEmpty)
        #expect(await Self.check(store, #"{"balance":3}"#).map(\.check) == [.pinned])
        #expect(await Self.check(store, #"{"balance":3}"#).isEmpty)
        #expect(await store.unsettled.isEmpty)
        // A judged difference that moves on is a difference of its own, not reads that disagree.
        #expect(await Self.check(store, #"{"balance":4}"#).isEmpty)
        #expect(await Self.check(store, #"{"balance":4}"#).map(\.check) == [.pinned])
        // A pin taken away is forgotten: nothing of it is read again.
        #expect(await Self.check(store, #"{"balance":5}"#).isEmpty)
        #expect(await store.unsettled == [Self.request])
        try await store.remove(Self.request)
        #expect(await store.unsettled.isEmpty)
    }

    /// `confirm` reads an unsettled pin again, at most twice, and stops as soon as it settles.
    @Test func confirmReadsAnUnsettledPinAgainAtMostTwice() async throws {
        let store = PinStore(path: nil)
        try await store.add(Pin(request: Self.request, body: .object(["balance": .int(1250)]), requestID: "rq-1", pinnedAt: t0))
        #expect(await Self.check(store, #"{"balance":1243}"#).isEmpty)
        let reads = Counter()
        await store.confirm { key in
            let n = await reads.next()
            _ = await Self.check(store, #"{"balance":1}"#, path: key.description.replacingOccurrences(of: "GET ", with: ""), requestID: "rq-c\(n)")
        }
        #expect(await reads.value == 2)  // 1243, then 1 (unsettled), then 1 again (settled)
        #expect(await store.unsettled.isEmpty)
        let calm = PinStore(path: nil)
        try await calm.add(Pin(request: Self.request, body: .object(["balance": .int(1250)]), requestID: "rq-1", pinnedAt: t0))
        await calm.confirm { _ in _ = await reads.next() }
        #expect(await reads.value == 2)  // nothing unsettled: nothing read
        // A server that fails every read again: two reads, then no more until an answer comes from elsewhere.
        let failing = PinStore(path: nil)
        try await failing.add(Pin(request: Self.request, body: .object(["balance": .int(1250)]), requestID: "rq-1", pinnedAt: t0))
        #expect(await Self.check(failing, #"{"balance":1243}"#).isEmpty)
        let tries = Counter()
        for _ in 0..<3 {
            await failing.confirm { _ in
                _ = await tries.next()
                _ = await Self.check(failing, #"{"message":"down"}"#, status: 503)
            }
        }
        #expect(await tries.value == 2)
    }

    actor Counter {
        var value = 0
        func next() -> Int { value += 1; return value }
    }

    @Test func pinsAreKeptInTheirFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pins-\(UUID())").path
        let path = PinStore.path(stateDirectory: folder, environment: "stag/ing")
        #expect(path.hasSuffix("/pins/stag_ing.json"))
        try await PinStore(path: path).add(Pin(request: Self.request, body: .object(["balance": .int(5)]), requestID: "rq-9", pinnedAt: t0))
        let again = PinStore(path: path)
        #expect(await again.requests == [Self.request] && again.unreadable == nil)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try await again.remove(nil) == 1)
        #expect(await PinStore(path: path).requests.isEmpty)
        try Data("not json".utf8).write(to: URL(fileURLWithPath: path))
        #expect(PinStore(path: path).unreadable != nil)
    }

    @Test func pOnARequestsRowPinsItsAnswerAndAgainUnpins() {
        var d = Driver.loaded()
        d.apply(.action(.requests))
        d.apply(.exchangeRecorded(Self.exchange(90, body: #"{"balance": 1250}"#)))
        d.state.requests.selectedIndex = d.state.requests.rows.firstIndex { $0.id == 90 } ?? 0
        let out = d.apply(.action(.pin))
        guard case let .pin(pin)? = out.first else { Issue.record("no pin effect: \(out)"); return }
        #expect(pin.request == Self.request && pin.body == .object(["balance": .int(1250)]) && pin.requestID == "rq-90")
        d.apply(.pinsChanged([Self.request], .pinned(Self.request)))
        #expect(d.state.pinned == [Self.request] && d.state.notice?.text.hasPrefix("Pinned GET /api/v1/balance?user_id=qa-alice") == true)
        #expect(d.apply(.action(.pin)) == [.unpin(Self.request)])
        // A write, or an answer cut at the log's 16 KiB, is not pinned: said in words.
        d.apply(.exchangeRecorded(Self.exchange(91, method: "POST", path: "/api/v1/spend_cheer?user_id=qa-alice", body: #"{"balance": 3}"#)))
        d.state.requests.selectedIndex = d.state.requests.rows.firstIndex { $0.id == 91 } ?? 0
        #expect(d.apply(.action(.pin)).isEmpty && d.state.notice?.text.hasPrefix("Only the answers of the balance") == true)
        d.apply(.exchangeRecorded(Self.exchange(92, path: "/api/v1/audio_packs", body: #"{"packs": [1, 2"# + "\n… (900 more bytes)")))
        d.state.requests.selectedIndex = d.state.requests.rows.firstIndex { $0.id == 92 } ?? 0
        #expect(d.apply(.action(.pin)).isEmpty && d.state.notice?.text.contains("16 KiB") == true)
    }

    /// A pin is keyed by its request (method, path, decoded query), not by how its line was spelled:
    /// a file whose query is percent-encoded differently still pins the same request.
    @Test func aPinIsFoundByItsRequestKeyWhateverTheSpelling() throws {
        let file = #"{"pins":[{"request":"GET /api/v1/balance?user%5Fid=qa%2Dalice","request_id":"rq-1","pinned_at":"2026-11-20T10:00:00Z","body":{"balance":5}}]}"#
        let book = try PinBook.read(Array(file.utf8))
        #expect(book[Self.request]?.requestID == "rq-1")
        #expect(PinBook.key("GET /api/v1/balance?user_id=qa-alice") == Self.request)
        #expect(PinBook.key("balance") == nil && PinBook.key("FETCH /api/v1/balance") == nil)
        // Written back as the client sends it.
        #expect(String(decoding: book.encoded(), as: UTF8.self).contains(#""request":"GET /api/v1/balance?user_id=qa-alice""#))
    }
}
