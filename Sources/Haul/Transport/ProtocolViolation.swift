import NIOHTTP1

/// Which of NIO's HTTP parser errors mean the server broke HTTP, as opposed to the connection
/// breaking.
///
/// A malformed status line or header (a control character such as ESC in a header, a bad
/// token, an unparsable Content-Length) or invalid chunk encoding is the server misbehaving:
/// asking again gets the same bytes, so such an error is `.invalidResponse` (exit 7) and is not
/// retried. A connection that ends in the middle of a message (`invalidEOFState`,
/// `closedConnection`) is a network failure and stays transient, like the parser's states
/// that say nothing about the server (`paused`, `invalidInternalState`). `unknown` is what
/// llhttp's errors without a case of their own become, an invalid Transfer-Encoding above
/// all (a response with both Transfer-Encoding and Content-Length, RFC 9112 §6.3): the
/// server's bytes again.
enum ProtocolViolation {
    /// The error for a parser failure that no retry can fix, or nil when it may be transient.
    static func error(for parserError: HTTPParserError, url: String) -> HaulError? {
        let what: String
        switch parserError {
        case .invalidCharactersUsed: what = "invalid characters in the response (a control character in a header?)"
        case .invalidHeaderToken: what = "an invalid header name or value"
        case .headerOverflow: what = "response headers too large"
        case .invalidVersion, .invalidStatus, .invalidConstant, .lfExpected: what = "a malformed status line or header"
        case .invalidContentLength, .unexpectedContentLength:
            what = "an invalid Content-Length, or one together with Transfer-Encoding (RFC 9112, section 6.3)"
        case .unknown:
            // What the parser has no case for: an invalid Transfer-Encoding (one that comes
            // after a Content-Length included, which RFC 9112 says to treat as an error, as it
            // may be response smuggling), a missing CR. All of it is bytes the server sent.
            what = "an invalid Transfer-Encoding (Transfer-Encoding and Content-Length together?) or line ending"
        case .invalidChunkSize: what = "invalid chunked encoding"
        case .trailingGarbage: what = "bytes after the end of the response"
        case .strictModeAssertion: what = "a response that breaks HTTP"
        case .invalidMethod, .invalidURL, .invalidHost, .invalidPort, .invalidPath, .invalidQueryString, .invalidFragment:
            what = "a response that cannot be parsed"
        case .invalidEOFState, .closedConnection, .paused, .invalidInternalState:
            return nil
        }
        return HaulError(.invalidResponse, "\(url): the server's response is not valid HTTP (\(what)); retrying cannot help")
    }
}
