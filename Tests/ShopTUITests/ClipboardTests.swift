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

    /// A stand-in for tmux: a script, run by its path.
    func fakeTmux(_ body: String) throws -> String {
        let path = folder.appendingPathComponent("tmux-\(UUID().uuidString)").path
        try "#!/bin/sh\n\(body)\n".write(toFile: path, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
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
        #expect(Clipboard.loadTmuxBuffer(Self.large, environment: Self.inTmux, program: tmux))
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
