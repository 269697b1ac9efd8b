import Foundation
import JSONTokens
import ShopAPI
import ShopCompare
import Testing
@testable import ShopViewModels

/// One identity for a history entry: the History tab (its comments shown, the cursor's entry) and
/// `compare` (the history list diffed by key) key it alike.
@Suite struct EntryKeyTests {
    static let idless = #"{"creator":"qa-alice","amount":25,"product":"com.reiterate.pack.rain","date":"2026-10-01T12:00:00Z","comments":[]}"#

    @Test func anIdlessEntryHasOneKeyInHistoryAndInCompare() throws {
        let bytes = Array(Self.idless.utf8)
        let json = try #require(JSONValue.parse(bytes))
        let entry = try JSONDecoder().decode(CheerHistoryEntry.self, from: Data(bytes))
        let historyKey = HistoryState.key(of: .entry(entry))
        #expect(historyKey == EntryKey(json: json))
        #expect(historyKey == .fields(date: "2026-10-01T12:00:00Z", product: "com.reiterate.pack.rain", amount: "25", creator: "qa-alice"))
        // The compare's path names that same key.
        #expect(ShopKeys.key(of: json, inList: "history") == historyKey.description)
        #expect(historyKey.description == "2026-10-01T12:00:00Z|com.reiterate.pack.rain|25|qa-alice")
        // The watch's reconciler matches entries by it too.
        #expect(Reconciler.key(entry) == historyKey)
    }

    @Test func anEntryWithAnIdIsKnownByItAlone() throws {
        let text = #"{"id":"h7","creator":"qa-alice","amount":25,"product":"p","date":"2026-10-01T12:00:00Z"}"#
        let json = try #require(JSONValue.parse(Array(text.utf8)))
        let entry = try JSONDecoder().decode(CheerHistoryEntry.self, from: Data(text.utf8))
        #expect(HistoryState.key(of: .entry(entry)) == .id("h7") && EntryKey(json: json) == .id("h7"))
        #expect(ShopKeys.key(of: json, inList: "history") == "id=h7")
        // An unreadable row keeps its id as its key; without one, its place and reason.
        #expect(HistoryState.key(of: .unreadable(UnreadableEntry(index: 3, id: "h7", reason: "x"))) == .id("h7"))
        #expect(HistoryState.key(of: .unreadable(UnreadableEntry(index: 3, id: nil, reason: "x"))) == .unreadable(index: 3, reason: "x"))
    }
}
