import ArgumentParser
import HaulTestServer

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `haul-test-server`: the fault-injecting test server as a standalone process.
///
/// Shell tests, benchmarks and users testing their own clients need the same server the Swift
/// tests use in-process. Scripts wait for the `listening on` line (printed and flushed once the
/// socket is bound) to learn the URL, and stop the server with SIGINT or SIGTERM.
struct HaulTestServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "haul-test-server",
        abstract: "HTTP server with scripted faults for testing download clients.",
        discussion: """
            Endpoints: GET|HEAD /file/<name>?size=&seed=&key=&etag=&lm=&ranges=&changeAfter=&status=\
            &retryAfter=&drop=&dropTimes=&rate=&lengthDelta=&chunked=&gzip=&disposition=&chunkSize=, \
            /redirect?n=&to=&code=, /loop, /redirect-to?location=, /status/<code>, \
            /live?key=&segments=&base=&window=&start=&target=&fail=, \
            POST /control/change?key=.
            """
    )

    @Option(help: "Port to listen on; 0 picks a free one.")
    var port: Int = 0

    @Option(help: "Address to bind.")
    var host: String = "127.0.0.1"

    func run() async throws {
        // Catch the signals before binding, so one sent right after the ready line is not lost.
        let signals = TerminationSignals.stream([SIGINT, SIGTERM])
        let server = try await TestServer.start(host: self.host, port: self.port)
        print("listening on \(server.baseURL)")
        fflush(nil)  // flush every stream: scripts block on this line through a pipe
        for await _ in signals { break }
        try await server.shutdown()
    }
}

// Parsed and run explicitly: in a main.swift, `await HaulTestServerCommand.main()` resolves to
// the synchronous `ParsableCommand.main()`, which cannot run an async command.
let command = HaulTestServerCommand.parseOrExit()
do {
    try await command.run()
} catch {
    HaulTestServerCommand.exit(withError: error)
}
