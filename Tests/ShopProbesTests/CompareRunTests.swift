import Foundation
import ShopAPI
import ShopCompare
import Testing
@testable import ShopProbes

/// `compare`'s run, out of the executable (issue 44, item 5), against the stand-in in this process.
@Suite struct CompareRunTests {
    @Test func twoUsersDifferInTheirBalanceAndOneUserDiffersFromNothing() async throws {
        let (same, apart) = try await withStandIn { client, _ in
            func side(_ user: String, _ name: String) -> LiveSide { LiveSide(client: client, user: user, environment: "local", name: name) }
            let same = try await CompareRun.compare(side("qa-alice", "A"), side("qa-alice", "B"), parts: [.balance, .packs], historyPages: 1,
                                                    ignore: IgnoreRules())
            let apart = try await CompareRun.compare(side("qa-alice", "A"), side("qa-whale", "B"), parts: [.balance], historyPages: 1,
                                                     ignore: IgnoreRules())
            return (same, apart)
        }
        #expect(same.differences.isEmpty && same.requestIDs.a.count == 2 && same.requestIDs.b.count == 2)
        #expect(apart.differences.count == 1 && apart.a.user == "qa-alice" && apart.b.user == "qa-whale")
    }

    /// A side that holds none of what is compared, and a side whose read failed, each say which side.
    @Test func aFailureSaysWhichSide() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("compare-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let har = folder.appendingPathComponent("packs.har")
        try Data(#"{"log":{"entries":[{"request":{"method":"GET","url":"http://h/api/v1/audio_packs"},"response":{"status":200,"content":{"text":"{\"packs\":[]}"}}}]}}"#.utf8)
            .write(to: har)
        let file = try FileSide(path: har.path)
        let words = try await withStandIn(token: "wrong") { client, _ in
            var words: [String] = []
            for (a, b) in [(file as any SideReader, LiveSide(client: client, user: "qa-alice", environment: "local", name: "B") as any SideReader),
                           (LiveSide(client: client, user: "qa-alice", environment: "local", name: "A"), file)] {
                do {
                    _ = try await CompareRun.compare(a, b, parts: [.balance], historyPages: 1, ignore: IgnoreRules())
                } catch {
                    words.append(CompareRun.reason(error))
                }
            }
            return words
        }
        #expect(words.count == 2)
        #expect(words.first?.hasPrefix("side B: ") == true && words.first?.contains("401") == true, "\(words)")
        #expect(words.last?.hasPrefix("side A: ") == true, "\(words)")
        #expect(CompareRun.reason(CompareRun.Missing(words: "A (x.har) holds no balance")) == "A (x.har) holds no balance")
    }
}
