// Platform floor for the first frame (make bench): a Swift program that links Foundation, as the app
// does, and prints one line. What it costs is loading the Swift runtime and Foundation on this
// machine; nothing of the app's. Built by Tests/bench/benchlib.py with `swiftc -O`.
import Foundation

let line = CommandLine.arguments.dropFirst().joined(separator: " ")
FileHandle.standardOutput.write(Data((line + "\n").utf8))
Thread.sleep(forTimeInterval: 5)
