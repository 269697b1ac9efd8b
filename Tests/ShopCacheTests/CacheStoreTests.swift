import Foundation
import Testing
@testable import ShopCache

struct Sample: Codable, Sendable, Equatable {
    var balance: Int
    var note: String
}

func temporaryDirectory() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("cache-\(UUID().uuidString)").path
}

func mode(_ path: String) throws -> Int {
    try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
}

@Suite struct CacheStoreTests {
    let key = CacheKey(baseURL: "http://127.0.0.1:8080", user: "qa-alice")

    @Test func roundTripKeepsValueAndFetchTime() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = CacheStore(directory: dir)
        let at = Date(timeIntervalSince1970: 1_795_300_000.25)
        #expect(await cache.read(Sample.self, kind: "balance", key: key) == nil)
        #expect(await cache.write(Sample(balance: 1250, note: "é 東京"), kind: "balance", key: key, fetchedAt: at))
        let entry = try #require(await cache.read(Sample.self, kind: "balance", key: key))
        #expect(entry.value == Sample(balance: 1250, note: "é 東京") && entry.fetchedAt == at)
        // Other users, shops and kinds are other entries.
        #expect(await cache.read(Sample.self, kind: "balance", key: CacheKey(baseURL: key.baseURL, user: "qa-empty")) == nil)
        #expect(await cache.read(Sample.self, kind: "balance", key: CacheKey(baseURL: "http://staging", user: "qa-alice")) == nil)
        #expect(await cache.read(Sample.self, kind: "packs", key: key) == nil)
        // A newer write replaces it.
        #expect(await cache.write(Sample(balance: 7, note: ""), kind: "balance", key: key, fetchedAt: at))
        #expect(await cache.read(Sample.self, kind: "balance", key: key)?.value.balance == 7)
    }

    @Test func directoryIs0700AndFilesAre0600() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let cache = CacheStore(directory: dir + "/nested/reiterate-shop")
        #expect(await cache.write(Sample(balance: 1, note: ""), kind: "balance", key: key, fetchedAt: Date()))
        #expect(try mode(dir + "/nested/reiterate-shop") == 0o700)
        #expect(try mode(cache.path(kind: "balance", key: key)) == 0o600)
        let existing = CacheStore(directory: dir)  // a directory that exists (maybe shared) is left as it is
        #expect(await existing.write(Sample(balance: 1, note: ""), kind: "balance", key: key, fetchedAt: Date()))
        #expect(try mode(dir) == 0o755)
        #expect(try mode(existing.path(kind: "balance", key: key)) == 0o600)
        let names = try FileManager.default.contentsOfDirectory(atPath: dir + "/nested/reiterate-shop")
        #expect(names.allSatisfy { !$0.hasSuffix(".tmp") }, "no temporary file is left behind")
    }

    @Test(arguments: ["empty", "truncated", "garbage", "wrong version", "wrong kind", "not a file", "binary"])
    func aDamagedFileIsIgnoredThenReplaced(_ damage: String) async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = CacheStore(directory: dir)
        #expect(await cache.write(Sample(balance: 1250, note: "ok"), kind: "balance", key: key, fetchedAt: Date()))
        let path = cache.path(kind: "balance", key: key)
        let good = try Data(contentsOf: URL(fileURLWithPath: path))
        try FileManager.default.removeItem(atPath: path)
        switch damage {
        case "empty": try Data().write(to: URL(fileURLWithPath: path))
        case "truncated": try good.prefix(good.count / 2).write(to: URL(fileURLWithPath: path))
        case "garbage": try Data("not json at all {{{".utf8).write(to: URL(fileURLWithPath: path))
        case "wrong version":
            let text = String(decoding: good, as: UTF8.self).replacingOccurrences(of: "\"format\":1", with: "\"format\":2")
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        case "wrong kind":
            let text = String(decoding: good, as: UTF8.self).replacingOccurrences(of: "\"kind\":\"balance\"", with: "\"kind\":\"packs\"")
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        case "not a file": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        default: try Data([0xFF, 0xFE, 0x00, 0x01, 0x7B]).write(to: URL(fileURLWithPath: path))
        }
        #expect(await cache.read(Sample.self, kind: "balance", key: key) == nil)
        if damage == "not a file" { try FileManager.default.removeItem(atPath: path) }
        #expect(await cache.write(Sample(balance: 99, note: "new"), kind: "balance", key: key, fetchedAt: Date()))
        #expect(await cache.read(Sample.self, kind: "balance", key: key)?.value.balance == 99)
    }

    @Test func aValueOfAnotherShapeIsIgnored() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = CacheStore(directory: dir)
        #expect(await cache.write(["unexpected": true], kind: "balance", key: key, fetchedAt: Date()))
        #expect(await cache.read(Sample.self, kind: "balance", key: key) == nil)
    }

    @Test func anUnwritableDirectoryIsReportedNotFatal() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(FileManager.default.createFile(atPath: dir, contents: Data("a file".utf8)))
        let cache = CacheStore(directory: dir)  // a file where the directory should be
        #expect(await cache.write(Sample(balance: 1, note: ""), kind: "balance", key: key, fetchedAt: Date()) == false)
        #expect(await cache.read(Sample.self, kind: "balance", key: key) == nil)
    }

    @Test func leftoversOfKilledWritersAreRemoved() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let old = dir + "/.reiterate-cache-OLD.tmp", fresh = dir + "/.reiterate-cache-NEW.tmp", other = dir + "/.keep.tmp"
        for path in [old, fresh, other] { #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8))) }
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3_600)], ofItemAtPath: old)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-3_600)], ofItemAtPath: other)
        let cache = CacheStore(directory: dir)
        #expect(await cache.write(Sample(balance: 1, note: ""), kind: "balance", key: key, fetchedAt: Date()))
        #expect(!FileManager.default.fileExists(atPath: old))
        #expect(FileManager.default.fileExists(atPath: fresh) && FileManager.default.fileExists(atPath: other))
    }

    @Test func location() {
        #expect(CacheLocation.directory(explicit: "/x", environment: ["XDG_CACHE_HOME": "/c", "HOME": "/h"]) == "/x")
        #expect(CacheLocation.directory(explicit: nil, environment: ["XDG_CACHE_HOME": "/c", "HOME": "/h"]) == "/c/reiterate-shop")
        #expect(CacheLocation.directory(explicit: nil, environment: ["XDG_CACHE_HOME": "relative", "HOME": "/h"]) == "/h/.cache/reiterate-shop")
        #expect(CacheLocation.directory(explicit: nil, environment: ["HOME": "/h"]) == "/h/.cache/reiterate-shop")
    }
}

/// Kills a writer with SIGKILL mid-write, over and over: every time the file holds a complete value,
/// the one before the interrupted write or the one it was writing.
@Suite struct CrashSafetyTests {
    struct Payload: Codable, Sendable {
        var generation: Int
        var filler: [Int]
    }

    static var probePath: String {
        ProcessInfo.processInfo.environment["CACHE_WRITE_PROBE"]
            ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("cache-write-probe").path
    }

    @Test func sigkillMidWriteLeavesOldOrNewCompleteValue() async throws {
        let probe = Self.probePath
        try #require(FileManager.default.isExecutableFile(atPath: probe), "build the cache-write-probe target (swift build)")
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let cache = CacheStore(directory: dir)
        let key = CacheKey(baseURL: "http://probe", user: "probe")
        var previous: Int?  // what the file held before this round
        var rounds = 0, torn = 0, killedMidRun = 0
        for round in 0..<200 {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: probe)
            process.arguments = [dir]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            // Once it is writing (its first line), kill it at a varying moment: a loaded machine
            // starts the probe late, and a kill before its first write would test nothing.
            let first = round % 10 == 0 ? Data() : output.fileHandleForReading.availableData
            try await Task.sleep(for: .milliseconds(1 + (round * 7919) % 20))  // a deliberate delay: the kill moment varies by round
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal)
            let rest = output.fileHandleForReading.readDataToEndOfFile()
            let lines = String(decoding: first + rest, as: UTF8.self).split(separator: "\n")
            let reported = lines.last.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
            rounds += 1
            guard let entry = await cache.read(Payload.self, kind: "probe", key: key) else {
                // Nothing yet is only possible before any write ever completed.
                #expect(previous == nil && reported == 0, "round \(round): file unreadable after \(reported) writes")
                if previous != nil || reported != 0 { torn += 1 }
                continue
            }
            let complete = entry.value.filler.count == 20_000 && entry.value.filler.allSatisfy { $0 == entry.value.generation }
            let allowed: Set<Int> = reported == 0 ? [previous ?? 1, 1] : [reported, reported + 1]
            #expect(complete && allowed.contains(entry.value.generation), "round \(round): generation \(entry.value.generation), reported \(reported)")
            if !complete || !allowed.contains(entry.value.generation) { torn += 1 }
            if reported > 0 { killedMidRun += 1 }
            previous = entry.value.generation
        }
        #expect(rounds == 200 && torn == 0)
        #expect(killedMidRun > 100, "most kills should land while the writer is writing (\(killedMidRun))")
    }
}
