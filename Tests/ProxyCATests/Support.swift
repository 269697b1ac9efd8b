import Foundation

/// A new empty folder under the system's temporary folder, removed by `remove()`.
struct Scratch {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-ca-\(UUID().uuidString)", isDirectory: true)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The CA's folder inside (not made yet: the CA makes it).
    var caFolder: URL { url.appendingPathComponent("ca", isDirectory: true) }

    /// Writes `text` to `name` in the scratch folder and gives its path.
    func write(_ name: String, _ text: String) throws -> String {
        let path = url.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// The `openssl` command, the oracle these tests hold the CA's certificates against.
enum OpenSSL {
    struct Outcome {
        let status: Int32
        let output: String
    }

    /// Runs `openssl` with `arguments`; stdout and stderr together.
    static func run(_ arguments: [String]) throws -> Outcome {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }
}

/// The POSIX permission bits of the file or folder at `path`.
func mode(_ path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? Int) ?? -1
}

/// The first PEM certificate of a chain.
func firstCertificate(_ chain: String) -> String {
    let end = "-----END CERTIFICATE-----"
    guard let range = chain.range(of: end) else { return chain }
    return String(chain[..<range.upperBound]) + "\n"
}
