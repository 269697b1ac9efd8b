import Foundation
import ShopCache

// cache-write-probe DIR: writes "generation N" entries to DIR forever, each with a payload whose
// every element repeats N (so a reader can tell a complete entry from a torn one), printing
// "wrote N" after each. The crash-safety test kills it with SIGKILL at random moments.

struct Payload: Codable, Sendable {
    var generation: Int
    var filler: [Int]
}

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: cache-write-probe DIR\n".utf8))
    exit(64)
}
let cache = CacheStore(directory: arguments[1])
let key = CacheKey(baseURL: "http://probe", user: "probe")
var generation = 0
while true {
    generation += 1
    let payload = Payload(generation: generation, filler: Array(repeating: generation, count: 20_000))
    guard await cache.write(payload, kind: "probe", key: key, fetchedAt: Date()) else { exit(1) }
    FileHandle.standardOutput.write(Data("wrote \(generation)\n".utf8))
}
