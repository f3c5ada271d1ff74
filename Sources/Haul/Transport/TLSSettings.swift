import Foundation
import NIOSSL

/// How HTTPS servers are trusted and how Haul proves who it is: curl's `--cacert`,
/// `--insecure`, `--cert`/`--key`; aria2's `--ca-certificate`, `--check-certificate`,
/// `--certificate`/`--private-key`.
///
/// TLS is set for a whole `DownloadManager` (its one HTTP client), not per download.
public struct TLSSettings: Sendable, Hashable {
    /// A PEM file of CA certificates trusted in addition to the system's (a private CA, or a
    /// self-signed server's own certificate). Default nil: the system's only.
    public var caCertificateFile: String?
    /// Whether the server's certificate chain and name are checked. Default true. False
    /// accepts any certificate, which lets anyone on the path read and change the bytes: for
    /// tests and emergencies only, and with a checksum.
    public var verifiesCertificates: Bool
    /// A PEM file with the client certificate (and its chain) for servers that ask for one.
    public var clientCertificateFile: String?
    /// The client certificate's private key (PEM). Default: looked for in `clientCertificateFile`.
    public var privateKeyFile: String?

    /// Settings; every default is stated on its property.
    public init(
        caCertificateFile: String? = nil, verifiesCertificates: Bool = true,
        clientCertificateFile: String? = nil, privateKeyFile: String? = nil
    ) {
        self.caCertificateFile = caCertificateFile
        self.verifiesCertificates = verifiesCertificates
        self.clientCertificateFile = clientCertificateFile
        self.privateKeyFile = privateKeyFile
    }

    /// Whether these are the defaults (nothing to load, the client's own TLS settings serve).
    var isDefault: Bool { self == TLSSettings() }

    /// Loads the files and checks that they can be used, so that a caller can refuse a bad
    /// file before anything starts. Throws `.certificate` with the file and the reason.
    public func validate() throws(HaulError) {
        _ = try makeConfiguration()
    }

    /// NIOSSL's configuration for these settings, with every file loaded now.
    func makeConfiguration() throws(HaulError) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        if let caCertificateFile {
            let roots = try Self.load("CA certificate file", caCertificateFile) { try NIOSSLCertificate.fromPEMFile($0) }
            guard !roots.isEmpty else {
                throw HaulError(.certificate, "the CA certificate file \(caCertificateFile) holds no PEM certificate")
            }
            configuration.additionalTrustRoots = [.certificates(roots)]
        }
        if !verifiesCertificates {
            configuration.certificateVerification = .none
        }
        if privateKeyFile != nil, clientCertificateFile == nil {
            throw HaulError(.certificate, "a private key was given without a client certificate")
        }
        if let clientCertificateFile {
            let chain = try Self.load("client certificate", clientCertificateFile) { try NIOSSLCertificate.fromPEMFile($0) }
            guard !chain.isEmpty else {
                throw HaulError(.certificate, "the client certificate file \(clientCertificateFile) holds no PEM certificate")
            }
            let keyFile = privateKeyFile ?? clientCertificateFile
            let key = try Self.load("private key", keyFile) { try NIOSSLPrivateKey(file: $0, format: .pem) }
            configuration.certificateChain = chain.map { .certificate($0) }
            configuration.privateKey = .privateKey(key)
        }
        return configuration
    }

    private static func load<T>(_ what: String, _ path: String, _ body: (String) throws -> T) throws(HaulError) -> T {
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw HaulError(.certificate, "cannot read the \(what) \(path)")
        }
        do {
            return try body(path)
        } catch {
            throw HaulError(.certificate, "the \(what) \(path) is not usable PEM (\(error))")
        }
    }
}
