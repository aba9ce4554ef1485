import Testing

@testable import IAPCommandLine

@Suite("InputReader text is valid UTF-8 or refused")
struct InputReaderTextTests {
    @Test func aPrettyPrintedDocumentWithInvalidUTF8IsRefusedNotMangled() throws {
        let stdout = BufferSink()
        let stderr = BufferSink()
        let body = Array("{\n  \"signedPayload\": \"a.b.c\",\n  \"x\": \"".utf8) + [0xC3] + Array("\"\n}\n".utf8)
        let code = runIAPCtl(
            arguments: ["verify", "--bundle-id", "com.example", "--environment", "Sandbox"],
            environment: [:], stdin: InputReader(bytes: body, name: "stdin"), stdout: stdout, stderr: stderr)
        #expect(code == 65)
        #expect(stderr.text.contains("UTF-8"))
    }
}
