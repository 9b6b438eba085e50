/*
 * DynamoDB Local bound to one address (hookledger: 127.0.0.1), answering only hookledger's own
 * tools. The jar's own main (ServerRunner) has no bind option and listens on every interface; this
 * builds the same server from the same command line, sets the host on its Jetty connector, puts a
 * guard in front of its handler, and starts it. Without telemetry (the jar's main would configure
 * it; hookledger turns it off anyway).
 *
 * The guard makes local/listener-guard.ts's checks, since the jar itself answers anyone (and CORS
 * preflights for any origin): Host must be <host>:<port> or localhost:<port> (a page that rebinds
 * its name to 127.0.0.1 sends its own), no Origin header and no OPTIONS (browsers send an Origin
 * with every cross-origin request), and an AWS SigV4 signature by the one access key named in the
 * environment (HOOKLEDGER_LOCAL_ACCESS_KEY_ID / HOOKLEDGER_LOCAL_SECRET_ACCESS_KEY: the stack's
 * per-start key), verified as local/sigv4.ts verifies it. Refusals are DynamoDB's JSON errors.
 *
 *   java -cp <compiled>:DynamoDBLocal.jar LoopbackDynamoDBLocal <host> <DynamoDBLocal.jar arguments...>
 *
 * Compiled once per checkout by local/emulators.ts into node_modules/.cache/hookledger/.
 */
import java.lang.reflect.Field;
import java.net.URLDecoder;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public final class LoopbackDynamoDBLocal {
  static final String ACCESS_KEY_ENV = "HOOKLEDGER_LOCAL_ACCESS_KEY_ID";
  static final String SECRET_ENV = "HOOKLEDGER_LOCAL_SECRET_ACCESS_KEY";

  public static void main(String[] args) throws Exception {
    if (args.length < 1) throw new IllegalArgumentException("usage: LoopbackDynamoDBLocal <host> [DynamoDBLocal.jar arguments]");
    String host = args[0];
    String[] jarArgs = Arrays.copyOfRange(args, 1, args.length);
    String accessKeyId = System.getenv(ACCESS_KEY_ENV);
    String secret = System.getenv(SECRET_ENV);
    if (accessKeyId == null || accessKeyId.isEmpty() || secret == null || secret.isEmpty()) {
      throw new IllegalStateException("set " + ACCESS_KEY_ENV + " and " + SECRET_ENV + ": the only key this DynamoDB Local accepts");
    }
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(jarArgs);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    Connector[] connectors = server.getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind");
    for (Connector connector : connectors) ((ServerConnector) connector).setHost(host);
    server.setHandler(new Guard(server.getHandler(), List.of(host + ":" + portOf(jarArgs), "localhost:" + portOf(jarArgs)), accessKeyId, secret));
    proxy.start();
  }

  private static String portOf(String[] jarArgs) {
    for (int i = 0; i + 1 < jarArgs.length; i++) if (jarArgs[i].equals("-port")) return jarArgs[i + 1];
    return "8000";
  }

  /** The checks of local/listener-guard.ts, then DynamoDB Local's own handler. */
  static final class Guard extends Handler.Wrapper {
    /** As AWS allows; as local/sigv4.ts's MAX_CLOCK_SKEW_MS. */
    private static final Duration MAX_SKEW = Duration.ofMinutes(15);
    /** A body read here for its hash is never larger than DynamoDB's own request limit allows. */
    private static final int MAX_BODY_BYTES = 16 * 1024 * 1024 + 64 * 1024;
    private static final Pattern AUTHORIZATION = Pattern.compile(
        "^AWS4-HMAC-SHA256 Credential=([^/,\\s]+)/(\\d{8})/([^/,\\s]+)/([^/,\\s]+)/aws4_request,\\s*SignedHeaders=([a-z0-9;_.-]+),\\s*Signature=([0-9a-f]{64})$");
    private static final DateTimeFormatter AMZ_DATE = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'");

    private final List<String> hosts;
    private final String accessKeyId;
    private final String secret;

    Guard(Handler handler, List<String> hosts, String accessKeyId, String secret) {
      super(handler);
      this.hosts = hosts;
      this.accessKeyId = accessKeyId;
      this.secret = secret;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
      HttpFields headers = request.getHeaders();
      String host = headers.get("Host");
      if (host == null || !hosts.contains(host.toLowerCase(Locale.ROOT))) {
        return refuse(response, callback, "AccessDeniedException", "this local listener answers to " + String.join(" or ", hosts) + " only");
      }
      if (headers.get("Origin") != null || "OPTIONS".equals(request.getMethod())) {
        return refuse(response, callback, "AccessDeniedException",
            "requests from a web page (an Origin header, a CORS preflight) are refused: the local stack answers this machine's tools only");
      }
      String authorization = headers.get("Authorization");
      if (authorization == null) {
        return refuse(response, callback, "MissingAuthenticationTokenException",
            "Request is missing Authentication Token: sign it with the local stack's per-start key");
      }
      Matcher auth = AUTHORIZATION.matcher(authorization.trim());
      String amzDate = headers.get("X-Amz-Date");
      if (!auth.matches() || amzDate == null || !amzDate.startsWith(auth.group(2)) || !Arrays.asList(auth.group(5).split(";")).contains("host")) {
        return refuse(response, callback, "IncompleteSignatureException", "the Authorization header is not a SigV4 header signature with its X-Amz-Date");
      }
      if (!auth.group(1).equals(accessKeyId)) {
        return refuse(response, callback, "UnrecognizedClientException",
            "The security token included in the request is invalid: access key " + auth.group(1) + " is not one this local stack accepts");
      }
      Instant at;
      try {
        at = LocalDateTime.parse(amzDate, AMZ_DATE).toInstant(ZoneOffset.UTC);
      } catch (RuntimeException e) {
        return refuse(response, callback, "IncompleteSignatureException", "X-Amz-Date is not yyyyMMdd'T'HHmmss'Z'");
      }
      if (Duration.between(at, Instant.now()).abs().compareTo(MAX_SKEW) > 0) {
        return refuse(response, callback, "InvalidSignatureException", "Signature expired: X-Amz-Date is more than 15 minutes from this machine's clock");
      }
      Request inner = request;
      String payloadHash = headers.get("X-Amz-Content-Sha256");
      if (payloadHash == null) {
        if (request.getLength() > MAX_BODY_BYTES) return refuse(response, callback, "ValidationException", "the request body is too large");
        ByteBuffer body = Content.Source.asByteBufferAsync(request, MAX_BODY_BYTES).get();
        payloadHash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytesOf(body.duplicate())));
        inner = new Replayed(request, body);
      }
      String expected = signature(request, headers, auth, amzDate, payloadHash);
      if (!MessageDigest.isEqual(expected.getBytes(StandardCharsets.US_ASCII), auth.group(6).getBytes(StandardCharsets.US_ASCII))) {
        return refuse(response, callback, "InvalidSignatureException",
            "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.");
      }
      return super.handle(inner, response, callback);
    }

    private String signature(Request request, HttpFields headers, Matcher auth, String amzDate, String payloadHash) throws Exception {
      List<String> signed = Arrays.asList(auth.group(5).split(";"));
      StringBuilder canonical = new StringBuilder();
      canonical.append(request.getMethod().toUpperCase(Locale.ROOT)).append('\n');
      String path = request.getHttpURI().getPath();
      canonical.append(canonicalPath(path == null || path.isEmpty() ? "/" : path)).append('\n');
      canonical.append(canonicalQuery(request.getHttpURI().getQuery())).append('\n');
      for (String name : signed) {
        List<String> values = headers.getValuesList(name);
        canonical.append(name).append(':').append(String.join(",", values).trim().replaceAll("\\s+", " ")).append('\n');
      }
      canonical.append('\n').append(auth.group(5)).append('\n').append(payloadHash);
      String scope = auth.group(2) + "/" + auth.group(3) + "/" + auth.group(4) + "/aws4_request";
      String toSign = "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + sha256Hex(canonical.toString());
      byte[] key = hmac(("AWS4" + secret).getBytes(StandardCharsets.UTF_8), auth.group(2));
      for (String part : new String[] {auth.group(3), auth.group(4), "aws4_request"}) key = hmac(key, part);
      return HexFormat.of().formatHex(hmac(key, toSign));
    }

    /** As local/sigv4.ts's canonicalPath for every service but S3: normalized, encoded once more. */
    private static String canonicalPath(String path) {
      List<String> segments = new ArrayList<>();
      for (String segment : path.split("/")) {
        if (segment.isEmpty() || segment.equals(".")) continue;
        if (segment.equals("..")) {
          if (!segments.isEmpty()) segments.remove(segments.size() - 1);
        } else segments.add(segment);
      }
      String normalized = "/" + String.join("/", segments) + (!segments.isEmpty() && path.endsWith("/") ? "/" : "");
      return escapeUri(normalized).replace("%2F", "/");
    }

    private static String canonicalQuery(String query) {
      if (query == null || query.isEmpty()) return "";
      List<String[]> pairs = new ArrayList<>();
      for (String part : query.split("&")) {
        if (part.isEmpty()) continue;
        int at = part.indexOf('=');
        String name = escapeUri(decode(at == -1 ? part : part.substring(0, at)));
        if (name.equalsIgnoreCase("x-amz-signature")) continue;
        pairs.add(new String[] {name, escapeUri(decode(at == -1 ? "" : part.substring(at + 1)))});
      }
      pairs.sort((a, b) -> a[0].equals(b[0]) ? a[1].compareTo(b[1]) : a[0].compareTo(b[0]));
      List<String> joined = new ArrayList<>();
      for (String[] pair : pairs) joined.add(pair[0] + "=" + pair[1]);
      return String.join("&", joined);
    }

    /** Percent-decoding only: a '+' is a plus, as the SDK encodes a space as %20. */
    private static String decode(String text) {
      try {
        return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        return text;
      }
    }

    /** RFC 3986: every byte but the unreserved characters percent-encoded, upper-case hex. */
    private static String escapeUri(String text) {
      StringBuilder out = new StringBuilder();
      for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
        char c = (char) (b & 0xff);
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' || c == '~') out.append(c);
        else out.append('%').append(String.format("%02X", b & 0xff));
      }
      return out.toString();
    }

    private static byte[] hmac(byte[] key, String data) throws Exception {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac.doFinal(data.getBytes(StandardCharsets.UTF_8));
    }

    private static String sha256Hex(String text) throws Exception {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
    }

    private static byte[] bytesOf(ByteBuffer buffer) {
      byte[] bytes = new byte[buffer.remaining()];
      buffer.get(bytes);
      return bytes;
    }

    /** A JSON string's content: a quoted access key id may hold anything but whitespace, slashes and commas. */
    private static String jsonEscape(String text) {
      StringBuilder out = new StringBuilder();
      for (char c : text.toCharArray()) {
        if (c == '"' || c == '\\') out.append('\\').append(c);
        else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
        else out.append(c);
      }
      return out.toString();
    }

    /** A DynamoDB JSON error, 403, and the request answered: DynamoDB Local never sees it. */
    private static boolean refuse(Response response, Callback callback, String type, String message) {
      String body = "{\"__type\":\"com.amazon.coral.service#" + type + "\",\"message\":\"" + jsonEscape(message) + "\"}";
      response.setStatus(403);
      response.getHeaders().put("Content-Type", "application/x-amz-json-1.0");
      response.getHeaders().put("x-amzn-ErrorType", type);
      response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
      return true;
    }
  }

  /** The request with its body, already read for its hash, served again to DynamoDB Local. */
  static final class Replayed extends Request.Wrapper {
    private Content.Chunk next;

    Replayed(Request request, ByteBuffer body) {
      super(request);
      this.next = Content.Chunk.from(body, true);
    }

    @Override
    public Content.Chunk read() {
      Content.Chunk chunk = next;
      next = Content.Chunk.EOF;
      return chunk;
    }

    @Override
    public void demand(Runnable demandCallback) {
      demandCallback.run();
    }

    @Override
    public boolean consumeAvailable() {
      next = Content.Chunk.EOF;
      return true;
    }
  }
}
