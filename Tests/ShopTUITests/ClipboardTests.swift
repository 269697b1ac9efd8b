import Foundation
import Testing
@testable import ShopTUI

/// `c` inside tmux loads tmux's paste buffer (`tmux load-buffer -`) on the UI thread: the whole
/// exchange, writing the text included, is bounded by its limit, so a tmux that hangs without
/// reading cannot freeze the app — even with a line larger than the socket's buffer.
@Suite struct ClipboardTests {
    /// The folder of this test's stand-ins (each test has its own, and removes it).
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fake-tmux-\(UUID().uuidString)")

    init() throws { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }

    /// A stand-in for tmux: a script, run by its path. It is written by a shell of its own, not by this
    /// process: a file this process had open for writing could be inherited by a child another test
    /// forks meanwhile, and running the script would then fail with "text file busy" (ETXTBSY; seen
    /// in CI as this suite's copy never reaching its stand-in).
    func fakeTmux(_ body: String) throws -> String {
        let path = folder.appendingPathComponent("tmux-\(UUID().uuidString)").path
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/bin/sh")
        writer.arguments = ["-c", "cat > \"$1\" && chmod 700 \"$1\"", "sh", path]
        let input = Pipe()
        writer.standardInput = input
        try writer.run()
        try input.fileHandleForWriting.write(contentsOf: Data("#!/bin/sh\n\(body)\n".utf8))
        try input.fileHandleForWriting.close()
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0, "the stand-in for tmux was written")
        return path
    }

    static let inTmux = ["TMUX": "/tmp/tmux-test/default,1,0"]
    /// Larger than any socket buffer: a write that blocked would wait for tmux forever.
    static let large = String(repeating: "curl -sS 'http://127.0.0.1/api/v1/balance?user_id=qa-alice' ", count: 40_000)

    @Test func aTmuxThatNeverReadsIsGivenUpAfterTheLimit() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let tmux = try fakeTmux("exec sleep 30")
        let started = ContinuousClock.now
        let took = Clipboard.loadTmuxBuffer(Self.large, environment: Self.inTmux, program: tmux, limit: .seconds(1))
        let elapsed = ContinuousClock.now - started
        #expect(!took, "the copy did not reach tmux")
        #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(2), "returned after \(elapsed)")
    }

    @Test func aTmuxThatReadsTakesTheWholeLine() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let out = folder.appendingPathComponent("buffer").path
        let tmux = try fakeTmux("[ \"$1 $2\" = \"load-buffer -\" ] || exit 2\ncat > '\(out)'")
        // A limit well past what the copy takes: this test is of the whole line, not of the limit (a loaded
        // machine takes longer than the 1 s of a real copy).
        #expect(Clipboard.loadTmuxBuffer(Self.large, environment: Self.inTmux, program: tmux, limit: .seconds(20)))
        #expect(try String(contentsOfFile: out, encoding: .utf8) == Self.large)
    }

    @Test func aTmuxThatFailsOrIsNotThereDidNotTakeIt() throws {
        defer { try? FileManager.default.removeItem(at: folder) }
        let failing = try fakeTmux("cat > /dev/null\nexit 1")
        #expect(!Clipboard.loadTmuxBuffer("curl", environment: Self.inTmux, program: failing))
        #expect(!Clipboard.loadTmuxBuffer("curl", environment: Self.inTmux, program: "/nonexistent/tmux"))
        #expect(!Clipboard.loadTmuxBuffer("curl", environment: [:], program: try fakeTmux("cat > /dev/null")), "outside tmux it is not asked")
    }
}
