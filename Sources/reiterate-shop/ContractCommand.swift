import ArgumentParser
import Foundation
import ShopAPI
import TerminalText

/// `reiterate-shop contract`: the contract as the watchdog knows it, as JSON — what a test compares
/// with `../shared/api/reiterate-api.yaml`, so the checks and the contract cannot drift apart.
struct ContractCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "contract",
        abstract: "Print the operations and schemas the contract watchdog checks responses against (JSON)."
    )

    struct Dump: Encodable {
        var operations: [ContractOperation]
        var error: ContractSchema
    }

    func run() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let data = try encoder.encode(Dump(operations: Contract.operations, error: Contract.error))
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
