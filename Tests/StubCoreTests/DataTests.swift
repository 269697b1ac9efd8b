import Foundation
import Testing
@testable import StubCore

@Suite struct PagingTests {
    @Test func totalPagesRoundsUp() {
        #expect(Paging(page: 1, perPage: 50, totalCount: 230).totalPages == 5)
        #expect(Paging(page: 1, perPage: 50, totalCount: 250).totalPages == 5)
        #expect(Paging(page: 1, perPage: 50, totalCount: 251).totalPages == 6)
        #expect(Paging(page: 1, perPage: 200, totalCount: 100_000).totalPages == 500)
        #expect(Paging(page: 1, perPage: 50, totalCount: 0).totalPages == 0)
    }

    @Test func rangesCoverEveryEntryOnce() {
        for perPage in [1, 7, 50, 200] {
            let pages = Paging(page: 1, perPage: perPage, totalCount: 230).totalPages
            let covered = (1...pages).flatMap { Array(Paging(page: $0, perPage: perPage, totalCount: 230).range) }
            #expect(covered == Array(0..<230), "per_page \(perPage)")
        }
    }

    @Test func pastTheEndIsEmpty() {
        #expect(Paging(page: 6, perPage: 50, totalCount: 230).range.isEmpty)
        #expect(Paging(page: 5, perPage: 50, totalCount: 230).range == 200..<230)
        #expect(Paging(page: Int.max, perPage: 200, totalCount: 230).range.isEmpty)
        #expect(Paging(page: 1, perPage: 50, totalCount: 0).range.isEmpty)
    }
}

@Suite struct ISODateTests {
    @Test func formatsUTC() {
        #expect(ISODate.format(epochSeconds: 0) == "1970-01-01T00:00:00Z")
        #expect(ISODate.format(epochSeconds: 1_660_789_800) == "2022-08-18T02:30:00Z")
        #expect(ISODate.format(epochSeconds: 1_660_789_800, millis: 123) == "2022-08-18T02:30:00.123Z")
        #expect(ISODate.format(epochSeconds: 1_660_789_800, millis: 7) == "2022-08-18T02:30:00.007Z")
        #expect(ISODate.format(epochSeconds: 951_782_400) == "2000-02-29T00:00:00Z")
    }

    @Test func agreesWithFoundationOverManyDays() throws {
        let formatter = ISO8601DateFormatter()
        var rng = SeededGenerator(seed: 1)
        for _ in 0..<2_000 {
            let t = Int64(rng.int(in: 0...4_102_444_800))
            #expect(ISODate.format(epochSeconds: t) == formatter.string(from: Date(timeIntervalSince1970: Double(t))))
        }
        #expect(ISODate.epoch(year: 2022, month: 8, day: 18, hour: 2, minute: 30) == 1_660_789_800)
    }
}

@Suite struct JSONTests {
    @Test func responsesAreCompactWithSortedKeys() throws {
        let grant = TokenGrant(accessToken: "a/b", refreshToken: "r", expiresIn: nil)
        #expect(String(decoding: try StubJSON.encode(grant), as: UTF8.self) == #"{"access_token":"a/b","refresh_token":"r"}"#)
        let error = ShopError(status: 404, code: "not_found", message: "no endpoint")
        #expect(String(decoding: try StubJSON.encode(error), as: UTF8.self) == #"{"code":"not_found","message":"no endpoint"}"#)
        let comment = CheerComment(signature: nil, body: "hi")
        #expect(String(decoding: try StubJSON.encode(comment), as: UTF8.self) == #"{"body":"hi","signature":null}"#)
    }

    @Test func sameDataSameBytes() throws {
        let packs = Catalog.packs(seed: 5)
        let once = try StubJSON.encode(packs)
        for _ in 0..<20 { #expect(try StubJSON.encode(packs) == once) }
    }

    @Test func controlCharactersAreEscapedAndRoundTrip() throws {
        let nasty = "\u{1B}[31m\u{0}\u{7F}\"\\\n\t\u{9B}\u{202E}日本👩‍👩‍👧‍👦"
        let bytes = try StubJSON.encode([nasty])
        #expect(!bytes.contains { $0 < 0x20 })  // DEL (0x7F) and C1 travel raw, as JSON allows
        let back = try JSONDecoder().decode(JSON.self, from: Data(bytes))
        #expect(back == .array([.string(nasty)]))
    }

    @Test func decodesAnyJSON() throws {
        let json = try JSONDecoder().decode(JSON.self, from: Data(#"{"b":1,"a":[null,true,"x",1.5],"u":18446744073709551615}"#.utf8))
        #expect(json["a"] == .array([.null, .bool(true), .string("x"), .double(1.5)]))
        #expect(json["u"]?.uint64Value == UInt64.max && json["b"]?.intValue == 1)
    }
}

@Suite struct SeedDataTests {
    let packs = Catalog.packs(seed: SeedData.defaultSeed)

    @Test func catalogIsLargeUniqueAndDeterministic() {
        #expect(packs.count >= 40)
        #expect(Set(packs.map(\.identifier)).count == packs.count)
        #expect(packs == Catalog.packs(seed: SeedData.defaultSeed))
        #expect(packs != Catalog.packs(seed: 7))
        #expect(packs.allSatisfy { $0.identifier.hasPrefix("com.reiterate.pack.") && !$0.tags.isEmpty && $0.sampleCount > 0 })
    }

    @Test func catalogHasAccentsCJKAndEmoji() {
        let text = packs.map { $0.name + $0.description + $0.creator }.joined()
        #expect(text.unicodeScalars.contains { (0x00C0...0x017F).contains($0.value) })  // Latin accents
        #expect(text.unicodeScalars.contains { (0x4E00...0x9FFF).contains($0.value) })  // CJK
        #expect(text.unicodeScalars.contains { $0.properties.isEmojiPresentation })
    }

    @Test func aliceHistoryIsNewestFirstWithVariedComments() {
        let history = SeedData.aliceHistory(seed: SeedData.defaultSeed, packs: packs)
        #expect(history.count == 230)
        #expect(zip(history, history.dropFirst()).allSatisfy { $0.date > $1.date })
        #expect(history.first?.date == SeedData.newest)
        let comments = history.compactMap(\.comments)
        #expect(history.contains { $0.comments == nil })
        #expect(comments.allSatisfy { $0.count <= 5 })
        #expect(comments.filter { !$0.isEmpty }.count > history.count / 2)
        let all = comments.flatMap { $0 }
        #expect(all.contains { $0.signature == nil })
        #expect(all.contains { $0.body == nil })
        #expect(all.contains { ($0.body?.count ?? 0) > 400 })
        #expect(history.contains { $0.dateMillis != nil } && history.contains { $0.dateMillis == nil })
        let identifiers = Set(packs.map(\.identifier))
        #expect(history.allSatisfy { identifiers.contains($0.product) && $0.amount > 0 })
    }

    @Test func generatedEntriesDependOnlyOnTheirIndex() {
        let e = SeedData.generatedEntry(seed: 3, user: "qa-whale", index: 99_999, packs: packs)
        #expect(e == SeedData.generatedEntry(seed: 3, user: "qa-whale", index: 99_999, packs: packs))
        #expect(e != SeedData.generatedEntry(seed: 4, user: "qa-whale", index: 99_999, packs: packs))
        let run = (0..<2_000).map { SeedData.generatedEntry(seed: 3, user: "qa-whale", index: $0, packs: packs) }
        #expect(zip(run, run.dropFirst()).allSatisfy { $0.date >= $1.date })
        #expect(Set(run.map(\.id)).count == run.count)
    }
}
