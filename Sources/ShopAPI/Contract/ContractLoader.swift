import Foundation

/// A contract document other than the built-in one (`--contract FILE`, `contract = "path"`): read
/// back from the cache folder when this very text was read before, else read by `reiterate-contract`
/// (OpenAPIKit, in its own process beside the app) and kept there by the text's hash.
public enum ContractLoader {
    /// The reader: `REITERATE_CONTRACT_READER`, else `reiterate-contract` beside the running binary.
    public static func readerPath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let path = environment["REITERATE_CONTRACT_READER"], !path.isEmpty { return path }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first ?? ""
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("reiterate-contract").path
    }

    public static func load(file: String, cacheDirectory: String?, reader: String = readerPath()) throws(ContractLoadError) -> Contract {
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            throw ContractLoadError(description: "cannot read the contract \(file): \((error as NSError).localizedFailureReason ?? "no such file, or not readable")")
        }
        let kept = cacheDirectory.map { ContractCache.path(for: text, in: $0) }
        if let kept, let contract = ContractCache.read(kept, source: file) { return contract }
        let output = try run(reader, file: file)
        guard let contract = ContractCache.read(bytes: output, source: file, document: ContractCache.hash(text)) else {
            throw ContractLoadError(description: "cannot read the contract \(file): its reader gave no contract (was the file changed meanwhile?)")
        }
        if let kept { ContractCache.write(contract, document: text, to: kept) }
        return contract
    }

    /// `reader FILE`'s standard output; its one-line error as the load error.
    static func run(_ reader: String, file: String) throws(ContractLoadError) -> [UInt8] {
        guard FileManager.default.isExecutableFile(atPath: reader) else {
            throw ContractLoadError(description: "cannot read the contract \(file): its reader, reiterate-contract, is not installed beside reiterate-shop")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: reader)
        process.arguments = ["--", file]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do {
            try process.run()
        } catch {
            throw ContractLoadError(description: "cannot read the contract \(file): its reader, reiterate-contract, did not start")
        }
        // Read both to the end before waiting (a full pipe would stall the reader).
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let said = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let line = String(decoding: said, as: UTF8.self).split(separator: "\n").first.map(String.init) ?? ""
            let reason = line.hasPrefix("error: ") ? String(line.dropFirst(7)) : "cannot read the contract \(file)"
            throw ContractLoadError(description: reason)
        }
        return Array(output)
    }
}
