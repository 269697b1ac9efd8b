import ArgumentParser
import ShopAPI
import Testing
@testable import reiterate_shop

/// `fail`: the one `error:` line and the exit status of a command's failure.
@Suite struct FailTests {
    struct Unforeseen: Error {}

    /// An error no branch knows is this program's failure: EX_SOFTWARE (70), not the server's 1.
    /// (The statuses are written out as numbers, as docs/ and scripts know them, not read back from
    /// `ExitStatus`, so a changed case fails here.)
    @Test func anUnknownErrorIsASoftwareFailure() {
        #expect(fail(Unforeseen()).rawValue == 70)
        #expect(fail(CancellationError()).rawValue == 70)  // no branch knows it either
    }

    /// The known ones keep their statuses: the command's own, a setting's, and the server's by kind.
    @Test func knownErrorsKeepTheirStatuses() {
        #expect(fail(CLIError(message: "x", exitCode: .usage)).rawValue == 64)
        #expect(fail(CLIError(message: "x", exitCode: .config)).rawValue == 78)
        #expect(fail(ValidationError("--history-pages takes 0 to 100000")).rawValue == 78)
        let endpoint = EndpointKey.get("/api/v1/balance")
        #expect(fail(ShopAPIError.http(status: 503, message: "m", code: "down", requestID: "rq-1", endpoint: endpoint, retryAfter: nil)).rawValue == 1)
        #expect(fail(ShopAPIError.transport(.connectionRefused(host: "shop.test"), endpoint: endpoint)).rawValue == 69)
        #expect(fail(ShopAPIError.transport(.dns(host: "shop.test"), endpoint: endpoint)).rawValue == 69)
    }
}
