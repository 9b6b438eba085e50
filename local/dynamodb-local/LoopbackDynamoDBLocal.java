/*
 * DynamoDB Local bound to one address (hookledger: 127.0.0.1). The jar's own main (ServerRunner)
 * has no bind option and listens on every interface; this builds the same server from the same
 * command line, sets the host on its Jetty connector, and starts it. Without telemetry (the
 * jar's main would configure it; hookledger turns it off anyway).
 *
 *   java -cp <compiled>:DynamoDBLocal.jar LoopbackDynamoDBLocal <host> <DynamoDBLocal.jar arguments...>
 *
 * Compiled once per checkout by local/emulators.ts into node_modules/.cache/hookledger/.
 */
import java.lang.reflect.Field;
import java.util.Arrays;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public final class LoopbackDynamoDBLocal {
  public static void main(String[] args) throws Exception {
    if (args.length < 1) throw new IllegalArgumentException("usage: LoopbackDynamoDBLocal <host> [DynamoDBLocal.jar arguments]");
    String host = args[0];
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(Arrays.copyOfRange(args, 1, args.length));
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    Connector[] connectors = server.getConnectors();
    if (connectors.length == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind");
    for (Connector connector : connectors) ((ServerConnector) connector).setHost(host);
    proxy.start();
  }
}
