import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// Reads a Metalink 4 document (RFC 5854) with Foundation's `XMLParser`.
///
/// The document is untrusted: it is refused when larger than the limit, when it declares a
/// DTD or entities (`<!DOCTYPE`, `<!ENTITY`; Metalink needs neither, and they are how XML
/// bombs and external-entity reads work), when elements nest deeper than a Metalink ever does,
/// or when it names more files or pieces than the limits allow. Unknown elements are ignored,
/// as the RFC asks.
package enum MetalinkParser {
    static let namespace = "urn:ietf:params:xml:ns:metalink"
    static let maxDepth = 16

    package static func parse(_ data: Data, limits: ResourceLimits = ResourceLimits()) throws(HaulError) -> MetalinkDocument {
        guard data.count <= limits.maxDocumentBytes else {
            throw HaulError(.invalidResponse, "the Metalink document is larger than \(limits.maxDocumentBytes) bytes")
        }
        let upper = String(decoding: data.prefix(64 << 10), as: UTF8.self).uppercased()
        if upper.contains("<!DOCTYPE") || upper.contains("<!ENTITY") || data.range(of: Data("<!ENTITY".utf8)) != nil
            || data.range(of: Data("<!DOCTYPE".utf8)) != nil {
            throw HaulError(.invalidResponse, "the Metalink document declares a DTD or entities, which Metalink does not use; refused")
        }
        let reader = Reader(limits: limits)
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        parser.shouldProcessNamespaces = true
        parser.delegate = reader
        let parsed = parser.parse()
        if let failure = reader.failure { throw failure }
        guard parsed else {
            let reason = parser.parserError.map { "\($0.localizedDescription)" } ?? "unknown error"
            throw HaulError(.invalidResponse, "the Metalink document is not well-formed XML (line \(parser.lineNumber)): \(reason)")
        }
        guard reader.sawRoot else {
            throw HaulError(.invalidResponse, "not a Metalink 4 document: no <metalink> element in \(namespace)")
        }
        // libxml2 reports no error for a document cut short: the root must have closed.
        guard reader.closedRoot else { throw HaulError(.invalidResponse, "the Metalink document ends before </metalink>") }
        guard !reader.document.files.isEmpty else { throw HaulError(.invalidResponse, "the Metalink document names no file") }
        return reader.document
    }

    /// The delegate: a small state machine over the element path.
    private final class Reader: NSObject, XMLParserDelegate {
        let limits: ResourceLimits
        var document = MetalinkDocument()
        var failure: HaulError?
        var sawRoot = false
        var closedRoot = false
        var depth = 0
        var path: [String] = []
        var text = ""
        var file: MetalinkFile?
        var attributes: [String: String] = [:]
        var pieceAttributes: [String: String] = [:]
        var pieceHashes: [String] = []
        var pieceCount = 0

        init(limits: ResourceLimits) { self.limits = limits }

        func fail(_ parser: XMLParser, _ message: String) {
            guard failure == nil else { return }
            failure = HaulError(.invalidResponse, "Metalink line \(parser.lineNumber): \(message)")
            parser.abortParsing()
        }

        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
            depth += 1
            guard depth <= MetalinkParser.maxDepth else { return fail(parser, "elements nest deeper than \(MetalinkParser.maxDepth)") }
            path.append(namespaceURI == MetalinkParser.namespace ? name : "")
            text = ""
            self.attributes = attributes
            switch (path.count, name, namespaceURI == MetalinkParser.namespace) {
            case (1, "metalink", true):
                sawRoot = true
            case (1, _, _):
                fail(parser, "the root element is not <metalink> in \(MetalinkParser.namespace)")
            case (2, "file", true) where path[0] == "metalink":
                guard let fileName = attributes["name"], !fileName.isEmpty else { return fail(parser, "a <file> without a name") }
                file = MetalinkFile(name: fileName)
            case (3, "pieces", true) where file != nil:
                pieceAttributes = attributes
                pieceHashes = []
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard text.utf8.count + string.utf8.count <= 64 << 10 else { return fail(parser, "an element's text is longer than 64 KiB") }
            text += string
        }

        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            defer {
                depth -= 1
                path.removeLast()
                text = ""
            }
            let value = text.trimmingWhitespace()
            let inFile = path.count == 3 && path[1] == "file" && file != nil
            switch (path.last ?? "", path.count) {
            case ("metalink", 1):
                closedRoot = true
            case ("file", 2):
                guard let file else { return }
                document.files.append(file)
                self.file = nil
                if document.files.count > limits.maxFiles { fail(parser, "more than \(limits.maxFiles) files (the limit)") }
            case ("size", 3) where inFile:
                guard let size = Int64(value), size >= 0 else { return fail(parser, "<size> is not a number of bytes") }
                file?.size = size
            case ("url", 3) where inFile:
                var priority: Int?
                if let text = attributes["priority"] {
                    guard let parsed = Int(text), parsed >= 1 else { return fail(parser, "url priority '\(text.prefix(20))' is not a number from 1") }
                    priority = parsed
                }
                guard !value.isEmpty else { return fail(parser, "an empty <url>") }
                file?.urls.append((value, priority))
                if (file?.urls.count ?? 0) > 1000 { fail(parser, "more than 1000 URLs for one file") }
            case ("hash", 3) where inFile:
                guard let type = attributes["type"] else { return fail(parser, "a <hash> without a type") }
                guard let algorithm = Checksum.Algorithm(name: type) else { return }  // unknown types are skipped
                guard let checksum = try? Checksum(algorithm, hex: value) else { return fail(parser, "the \(type) hash is not \(algorithm.hexLength) hex digits") }
                file?.hashes.append(checksum)
            case ("hash", 4) where path[2] == "pieces" && file != nil:
                pieceHashes.append(value.lowercased())
                pieceCount += 1
                if pieceCount > 10_000_000 { fail(parser, "too many piece hashes") }
            case ("pieces", 3) where inFile:
                guard let lengthText = pieceAttributes["length"], let length = Int64(lengthText), length > 0,
                      let type = pieceAttributes["type"]
                else { return fail(parser, "<pieces> needs a positive length and a type") }
                guard let algorithm = Checksum.Algorithm(name: type) else { return }
                guard pieceHashes.allSatisfy({ hash in (try? Checksum(algorithm, hex: hash)) != nil }) else {
                    return fail(parser, "a piece hash is not \(algorithm.hexLength) hex digits")
                }
                file?.pieces = MetalinkPieces(length: length, algorithm: algorithm, hashes: pieceHashes)
            default:
                break
            }
        }

        func parser(_ parser: XMLParser, foundInternalEntityDeclarationWithName name: String, value: String?) {
            fail(parser, "entity declarations are refused")
        }

        func parser(_ parser: XMLParser, resolveExternalEntityName name: String, systemID: String?) -> Data? {
            fail(parser, "external entities are refused")
            return nil
        }
    }
}
