import ArgumentParser
import Foundation
import ShopAPI
import TerminalText

/// `reiterate-shop contract`: the contract as the watchdog reads it from its document (the built-in
/// copy, or `--contract FILE`), as JSON — what a test compares with the YAML as Python reads it.
struct ContractCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contract",
        abstract: "Print the operations and schemas the contract watchdog checks responses against (JSON)."
    )

    @Option(name: .long, help: ArgumentHelp("Read another version of the OpenAPI document instead of the built-in one.", valueName: "file"))
    var contract: String?

    struct Dump: Encodable {
        var source: String
        var operations: [ContractOperation]
        var error: ContractSchema?
    }

    func run() throws {
        var loaded = Contract.builtIn()
        if let contract {
            do {
                loaded = try ContractLoader.load(file: contract, cacheDirectory: nil)
            } catch {
                Terminal.err("error: \(Sanitizer.line(error.description))\n")
                throw ExitCode(ExitStatus.config.rawValue)
            }
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(Dump(source: loaded.source, operations: loaded.operations, error: loaded.error))
        Terminal.out(String(decoding: data, as: UTF8.self) + "\n")
    }
}

/// `warning: [check] expected …, got … (request id …)` for each finding of the exchanges `print`
/// made; answers how many there were.
func reportFindings(_ exchanges: [Exchange]) -> Int {
    var count = 0
    for e in exchanges {
        for finding in e.findings {
            count += 1
            let id = e.requestID.map { " (request id \(Sanitizer.line($0)))" } ?? ""
            Terminal.err("warning: \(e.method) \(Sanitizer.line(e.path)): \(Sanitizer.line(finding.line))\(id)\n")
        }
    }
    return count
}
