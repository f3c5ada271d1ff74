import ArgumentParser
import Haul

/// aria2's TLS options for `haul get`: trust a private CA, skip certificate checks (loudly),
/// or present a client certificate.
struct TLSOptions: ParsableArguments {
    @Option(name: .customLong("ca-certificate"), help: ArgumentHelp(
        "Also trust the CA certificates in this PEM file (a private CA, or a self-signed server's certificate).",
        valueName: "file"))
    var caCertificate: String?

    @Option(name: .customLong("check-certificate"), help: ArgumentHelp(
        "Check the server's certificate and name (default true); false accepts any certificate, which is unsafe.",
        valueName: "true|false"))
    var checkCertificate: Bool?

    @Option(name: .customLong("certificate"), help: ArgumentHelp(
        "Client certificate (PEM) for servers that ask for one.", valueName: "file"))
    var certificate: String?

    @Option(name: .customLong("private-key"), help: ArgumentHelp(
        "The client certificate's private key (PEM); default: in the --certificate file.", valueName: "file"))
    var privateKey: String?

    var settings: TLSSettings {
        TLSSettings(
            caCertificateFile: caCertificate, verifiesCertificates: checkCertificate ?? true,
            clientCertificateFile: certificate, privateKeyFile: privateKey)
    }

    /// Unreadable or unusable files are refused before anything starts.
    func validate() throws {
        do {
            try settings.validate()
        } catch {
            throw ValidationError(error.message)
        }
    }

    /// Said on stderr at every run that does not check certificates.
    static let insecureWarning = """
        haul: WARNING: --check-certificate=false: server certificates are NOT checked; anyone on the \
        network path can read and change what is downloaded. Use --ca-certificate FILE to trust a private CA instead.
        """
}
