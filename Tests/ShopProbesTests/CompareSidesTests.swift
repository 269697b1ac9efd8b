import Foundation
import JSONTokens
import ShopAPI
import ShopCompare
import Synchronization
import Testing
@testable import ShopProbes

/// `compare`'s and `snapshot`'s sides, out of the executable (issue 44, item 5).
@Suite struct CompareSidesTests {
    /// Every entry of a side's history, read page after page of `perPage` until the side says the end.
    static func entries(_ side: any SideReader, perPage: Int) async throws -> Int {
        var count = 0
        var page = 1
        while let reads = try await side.historyReads(page: page, perPage: perPage), page <= 20 {
            count += reads.reduce(0) { $0 + $1.historyShape.count }
            page += 1
        }
        return count
    }

    /// A page size the contract allows (1–200), refused: the side reads on in a smaller one, says so once, and
    /// still reaches every entry; a server that serves pages shorter than asked is read in its size.
    @Test func aRefusedOrShortPageSizeStillReachesEveryEntry() async throws {
        let warnings = Mutex<[String]>([])
        let (total, refused, short) = try await withStandIn { client, stub in
            let total = try await client.send(CheerHistory(user: "qa-alice", page: 1, perPage: 1)).totalCount
            try await stub.addFault("status,status=400,path=/api/v1/cheer_history,count=1")
            let side = LiveSide(client: client, user: "qa-alice", environment: "local", name: "A", warn: { line in warnings.withLock { $0.append(line) } })
            let refused = try await Self.entries(side, perPage: 200)
            try await stub.addFault("short_pages,cap=50")
            let short = try await Self.entries(LiveSide(client: client, user: "qa-alice", environment: "local", name: "B"), perPage: 200)
            return (total, refused, short)
        }
        #expect(total > 200)
        #expect(refused == total && short == total)
        let said = warnings.withLock { $0 }
        #expect(said.count == 1 && said[0].hasPrefix("warning: ") && said[0].contains("100"), "\(said)")
    }

    @Test func aFileThatIsNoSideSaysWhy() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sides-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        #expect(throws: FileSide.Unreadable.self) { try FileSide(path: folder.appendingPathComponent("missing.json").path) }
        let junk = folder.appendingPathComponent("junk.json")
        try Data(#"{"a":1}"#.utf8).write(to: junk)
        do {
            _ = try FileSide(path: junk.path)
            Issue.record("a JSON array read as a side")
        } catch let .notASnapshot(words) {
            #expect(words.hasPrefix(junk.path + ": ") && words.contains("neither a snapshot"), "\(words)")
        } catch {
            Issue.record("\(error)")
        }
        // A HAR whose 2xx answer was cut at its preview: read, and the cut told in a note.
        let har = folder.appendingPathComponent("cut.har")
        try Data(#"{"log":{"entries":[{"request":{"method":"GET","url":"http://h/api/v1/audio_packs"},"response":{"status":200,"content":{"text":"{\"packs\":["}}}]}}"#.utf8)
            .write(to: har)
        let side = try FileSide(path: har.path)
        #expect(side.cutNote?.contains("1 answer cut at the HAR's 16 KiB preview, not compared (GET /api/v1/audio_packs)") == true, "\(side.cutNote ?? "")")
    }
}
