import java.io.File;
import javax.xml.XMLConstants;
import javax.xml.transform.stream.StreamSource;
import javax.xml.validation.Schema;
import javax.xml.validation.SchemaFactory;
import javax.xml.validation.Validator;
import org.xml.sax.SAXParseException;

/**
 * Validates JUnit XML files against an XML schema with the JDK's own validator.
 *
 * <p>{@code java Validate.java SCHEMA.xsd FILE...}: prints one line per file ({@code valid
 * FILE}, or {@code invalid FILE:LINE:COLUMN: reason}) and exits with 0 when every file is
 * valid, 1 when one is not, 2 on bad arguments.
 */
public class Validate {
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: java Validate.java SCHEMA.xsd FILE...");
            System.exit(2);
        }
        SchemaFactory factory = SchemaFactory.newInstance(XMLConstants.W3C_XML_SCHEMA_NS_URI);
        Schema schema = factory.newSchema(new File(args[0]));
        boolean allValid = true;
        for (int i = 1; i < args.length; i++) {
            Validator validator = schema.newValidator();
            try {
                validator.validate(new StreamSource(new File(args[i])));
                System.out.println("valid " + args[i]);
            } catch (SAXParseException e) {
                allValid = false;
                System.out.println("invalid " + args[i] + ":" + e.getLineNumber() + ":"
                        + e.getColumnNumber() + ": " + e.getMessage());
            }
        }
        System.exit(allValid ? 0 : 1);
    }
}
