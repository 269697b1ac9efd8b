import Foundation
import ShopAPI
import Synchronization
import Testing
@testable import ShopProbes

/// `print history --all`'s stream and `print`'s renderings, out of the executable (issue 44, item 5).
@Suite struct HistoryStreamTests {
    final class Collected: Sendable {
        let out = Mutex<[String]>([])
        let err = Mutex<[String]>([])
        var lines: OutputLines {
            OutputLines(out: { text in self.out.withLock { $0.append(text) } }, err: { text in self.err.withLock { $0.append(text) } })
        }
    }

    /// Every entry the server counts is printed, one line each (here in the stand-in's short pages, which the
    /// stream reads on in their size), and the JSON lines read back as the entries.
    @Test func everyEntryIsPrintedOnceAsTextAndAsJSON() async throws {
        let text = Collected(), json = Collected()
        let (total, whole, wholeJSON) = try await withStandIn(faults: ["short_pages,cap=50"]) { client, _ in
            let total = try await client.send(CheerHistory(user: "qa-alice", page: 1, perPage: 1)).totalCount
            var stream = HistoryStream(user: "qa-alice", json: false, find: nil, since: nil, until: nil, lines: text.lines)
            let whole = try await stream.run(client)
            var jsonStream = HistoryStream(user: "qa-alice", json: true, find: nil, since: nil, until: nil, lines: json.lines)
            let wholeJSON = try await jsonStream.run(client)
            return (total, whole, wholeJSON)
        }
        #expect(whole && wholeJSON)
        let rows = text.out.withLock { $0 }.joined().split(separator: "\n").map(String.init)
        #expect(rows.first == HistoryStream.header.trimmingCharacters(in: .newlines))
        // Every entry once: each id once among the JSON lines; the text rows are the header, one row an entry
        // and at most a last line.
        let objects = json.out.withLock { $0 }.joined().split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let ids = objects.compactMap { $0["id"] as? String }
        #expect(objects.count == total && ids.count == total && Set(ids).count == total)
        #expect(rows.count == total + 1 || rows.count == total + 2, "\(rows.count) rows for \(total) entries")
        // The stand-in's short pages are a paging warning on stderr, said once.
        #expect(text.err.withLock { $0 }.filter { $0.contains("[paging]") }.count == 1, "\(text.err.withLock { $0 })")
    }

    @Test func aDayIsTheLocalDaysBoundsAndAnythingElseIsNone() throws {
        let start = try #require(HistoryStream.dayStart("2026-11-28"))
        let after = try #require(HistoryStream.dayAfter("2026-11-28"))
        #expect(after.timeIntervalSince(start) >= 23 * 3600 && after.timeIntervalSince(start) <= 25 * 3600)
        #expect(HistoryStream.dayStart("yesterday") == nil && HistoryStream.dayStart("2026-13-01") == nil)
    }

    @Test func aJSONLineEscapesWhatNoTerminalMayGetRaw() throws {
        let line = try Output.jsonLine(["comment": "bidi \u{202E}evil and bell \u{07}"])
        #expect(!line.unicodeScalars.contains { $0.value == 0x202E || $0.value == 0x07 } && line.hasSuffix("\n"))
        let back = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String])
        #expect(back["comment"] == "bidi \u{202E}evil and bell \u{07}")
    }
}
