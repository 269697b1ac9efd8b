import Foundation
import Testing
@testable import StubCore

@Suite struct FaultSpecTests {
    @Test func parsesTheCommandLineSyntax() throws {
        let spec = try FaultSpec.parse("status,status=503,path=/api/v1/balance,count=2,retry_after=9")
        #expect(spec.kind == .status && spec.status == 503 && spec.path == "/api/v1/balance" && spec.count == 2 && spec.retryAfter == 9)
        let latency = try FaultSpec.parse("kind=latency,ms=800,jitter=400,rate=0.5,method=get")
        #expect(latency.kind == .latency && latency.ms == 800 && latency.jitter == 400 && latency.rate == 0.5 && latency.method == "GET")
        #expect(try FaultSpec.parse("html").status == 502)
        #expect(try FaultSpec.parse("rate_limit").retryAfter == 2)
        #expect(try FaultSpec.parse("hostile").path == "/api/*")
    }

    @Test func rejectsMistakesWithAMessage() {
        #expect(throws: FaultSpecError.self) { try FaultSpec.parse("explode") }
        #expect(throws: FaultSpecError.self) { try FaultSpec.parse("status,colour=red") }
        #expect(throws: FaultSpecError.self) { try FaultSpec.parse("status,status=200") }
        #expect(throws: FaultSpecError.self) { try FaultSpec.parse("latency,rate=1.5") }
        #expect(throws: FaultSpecError.self) { try FaultSpec.parse("html,status=404") }
        #expect(throws: FaultSpecError.self) { try FaultSpec.parse("latency,800") }
        do {
            _ = try FaultSpec.parse("explode")
        } catch let error as FaultSpecError {
            #expect(error.message.contains("unknown fault kind 'explode'") && error.message.contains("malformed_entry"))
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func jsonAndCommandLineAgree() throws {
        let fromJSON = try FaultSpec.from(json: .object([("kind", .string("truncate")), ("keep", .int(10)), ("count", .int(1))]))
        #expect(fromJSON == (try FaultSpec.parse("truncate,keep=10,count=1")))
        let listed = try JSONDecoder().decode(JSON.self, from: Data(try StubJSON.encode(fromJSON)))
        #expect(try FaultSpec.from(json: listed) == fromJSON)
    }

    @Test func listedFaultsNameTheirKeys() throws {
        let fault = ActiveFault(id: 7, spec: try FaultSpec.parse("status,status=503,retry_after=9,count=2"), remaining: 2)
        #expect(String(decoding: try StubJSON.encode(fault), as: UTF8.self)
            == #"{"count":2,"hits":0,"id":7,"kind":"status","path":"/api/*","remaining":2,"retry_after":9,"status":503}"#)
    }
}

@Suite struct FaultRegistryTests {
    let all = Set(FaultKind.allCases)

    /// Triggers and applies every hit, as a request that the faults shaped.
    func hitAndApply(_ registry: FaultRegistry, _ path: String, method: String = "GET", applicable: Set<FaultKind>? = nil) async -> [FaultKind] {
        let hits = await registry.trigger(method: method, path: path, applicable: applicable ?? all)
        await registry.settle(applied: hits, released: [])
        return hits.map(\.spec.kind)
    }

    @Test func countHitsTheNextNThenDisappears() async throws {
        let registry = FaultRegistry(initial: [try FaultSpec.parse("status,count=2,path=/api/v1/balance")])
        #expect(await hitAndApply(registry, "/api/v1/audio_packs").isEmpty)
        #expect(await hitAndApply(registry, "/api/v1/balance") == [.status])
        #expect(await registry.list().first?.remaining == 1)
        #expect(await hitAndApply(registry, "/api/v1/balance") == [.status])
        #expect(await hitAndApply(registry, "/api/v1/balance").isEmpty)
        #expect(await registry.list().isEmpty)
    }

    @Test func aReleasedHitKeepsItsCount() async throws {
        let registry = FaultRegistry(initial: [try FaultSpec.parse("truncate,count=1")])
        let first = await registry.trigger(method: "GET", path: "/api/v1/balance", applicable: all)
        // While the first request holds the only use, a concurrent one does not get it.
        #expect(await registry.trigger(method: "GET", path: "/api/v1/balance", applicable: all).isEmpty)
        await registry.settle(applied: [], released: first)
        #expect(await registry.list().first?.remaining == 1)
        #expect(await hitAndApply(registry, "/api/v1/balance") == [.truncate])
        #expect(await registry.list().isEmpty)
    }

    @Test func inapplicableKindsNeitherHitNorCountDown() async throws {
        let registry = FaultRegistry(initial: [try FaultSpec.parse("malformed_entry,count=1,path=*")])
        #expect(await hitAndApply(registry, "/api/v1/balance", applicable: [.status]).isEmpty)
        #expect(await registry.list().first?.remaining == 1)
        #expect(await hitAndApply(registry, "/api/v1/cheer_history", applicable: [.malformedEntry]) == [.malformedEntry])
    }

    @Test func rateHitsAboutThatShare() async throws {
        let registry = FaultRegistry(seed: 11, initial: [try FaultSpec.parse("latency,rate=0.25")])
        var hits = 0
        for _ in 0..<4_000 where await !hitAndApply(registry, "/api/v1/balance").isEmpty {
            hits += 1
        }
        #expect((850...1_150).contains(hits))
        #expect(await registry.list().first?.hits == hits)
    }

    @Test func methodScopeAndRemoval() async throws {
        let registry = FaultRegistry()
        let fault = await registry.add(try FaultSpec.parse("reset,method=POST"))
        #expect(await hitAndApply(registry, "/api/v1/spend_cheer").isEmpty)
        #expect(await hitAndApply(registry, "/api/v1/spend_cheer", method: "POST") == [.reset])
        #expect(await registry.remove(id: fault.id))
        #expect(await !registry.remove(id: fault.id))
        await registry.add(try FaultSpec.parse("hang"))
        #expect(await registry.clear() == 1)
    }

    @Test func globs() {
        #expect(Glob.matches("/api/*", "/api/v1/balance"))
        #expect(Glob.matches("*history", "/api/v1/cheer_history"))
        #expect(Glob.matches("/api/v?/balance", "/api/v1/balance"))
        #expect(!Glob.matches("/api/v1/balance", "/api/v1/balances"))
        #expect(!Glob.matches("/api/*/x", "/api/v1/y"))
        #expect(Glob.matches("*", ""))
    }
}

@Suite struct HostileTextTests {
    @Test func coversEveryHazard() {
        let scalars = HostileText.samples.joined().unicodeScalars.map(\.value)
        #expect(scalars.contains(0x1B))                                  // ESC (CSI, OSC, DCS)
        #expect(scalars.contains { (0x80...0x9F).contains($0) })         // C1
        #expect(scalars.contains { [0x202E, 0x2066, 0x200F].contains($0) })  // bidi
        #expect(scalars.contains { [0x200B, 0xFEFF, 0x2060].contains($0) })  // zero-width
        #expect(scalars.contains { (0x0300...0x036F).contains($0) })     // combining
        #expect(scalars.contains(0x7F) && scalars.contains(0x00))
        #expect(HostileText.samples.contains { $0.count >= 300 && !$0.contains(" ") })
    }

    @Test func hostilePageStillSerializesAsJSON() throws {
        let packs = Catalog.packs(seed: 1)
        let entries = (0..<20).map { SeedData.generatedEntry(seed: 1, user: "u", index: $0, packs: packs) }
        let page = HostileText.apply(to: HistoryPage(entries: entries, paging: Paging(page: 1, perPage: 20, totalCount: 20)))
        #expect(page.entries.allSatisfy { $0.creator.unicodeScalars.count > 0 && ($0.comments?.count ?? 0) >= 1 })
        #expect(page.entries.contains { $0.creator.contains("\u{1B}") })
        let bytes = try StubJSON.encode(page)
        #expect(!bytes.contains(0x1B))  // escaped as \u001b on the wire
        let hostilePacks = HostileText.apply(to: packs)
        #expect(zip(hostilePacks, packs).allSatisfy { hostile, plain in
            hostile.identifier == plain.identifier && hostile.name != plain.name && hostile.name.hasSuffix(plain.name)
        })
    }

    @Test func aMalformedEntryKeepsItsPlaceAndID() throws {
        let packs = Catalog.packs(seed: 1)
        let entries = (0..<5).map { SeedData.generatedEntry(seed: 1, user: "u", index: $0, packs: packs) }
        let page = HistoryPage(entries: entries, paging: Paging(page: 1, perPage: 5, totalCount: 5))
        let broken = try #require(HostileText.malform(page, index: nil))
        let json = try JSONDecoder().decode(JSON.self, from: Data(try StubJSON.encode(broken)))
        guard case let .array(items)? = json["history"] else { Issue.record("no history"); return }
        #expect(items.count == 5 && items[2]["id"] == .string(entries[2].id) && items[2]["creator"] == .int(42))
        #expect(items[2]["product"] == .null && items[1]["creator"] == .string(entries[1].creator))
        #expect(HostileText.malform(page, index: 99)?.malformedIndex == 4)
        #expect(HostileText.malform(HistoryPage(entries: [], paging: page.paging), index: 0) == nil)
    }
}
