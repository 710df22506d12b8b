/**
 * From an MCP tool result to what the model sees.
 *
 * A result is a list of content items (text, image, audio, embedded resource, resource link) plus
 * optional structured data. The engine's tool output is one string, or one image: so a lone image
 * stays an image, and everything else is rendered as text, with binary payloads described rather
 * than pasted (base64 in a text result only burns the model's context).
 */
import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/sdk/types.js";
import type { ToolOutput } from "../../engine/types.js";

/** Larger images are described instead of passed on (the common provider limit for one image). */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

/** Decoded size of base64 text, without decoding it. */
export function base64Bytes(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

export function toolOutputFromResult(
  result: Pick<CallToolResult, "content" | "structuredContent" | "isError">,
  origin: { server: string; tool: string },
): ToolOutput {
  const isError = result.isError === true;
  const content = Array.isArray(result.content) ? result.content : [];
  const metadata: Record<string, unknown> = { mcp_server: origin.server, mcp_tool: origin.tool };

  const only = content.length === 1 ? content[0] : undefined;
  if (!isError && only?.type === "image") {
    const bytes = base64Bytes(only.data);
    if (bytes <= MAX_IMAGE_BYTES) {
      return {
        output: only.data,
        outputType: "image",
        metadata: { ...metadata, media_type: only.mimeType, bytes },
      };
    }
  }

  let output = content.map(renderBlock).join("\n");
  // Servers should mirror structured data as text; when one does not, the data is the output.
  if (output === "" && result.structuredContent !== undefined)
    output = JSON.stringify(result.structuredContent);
  if (output === "") output = isError ? "the tool failed without saying why" : "(no output)";
  return isError ? { output, isError: true, metadata } : { output, metadata };
}

function renderBlock(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "image":
      return `[image ${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown]`;
    case "audio":
      return `[audio ${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown]`;
    case "resource": {
      const resource = block.resource;
      if ("text" in resource && typeof resource.text === "string") {
        return `[resource ${resource.uri}]\n${resource.text}`;
      }
      const blob = "blob" in resource && typeof resource.blob === "string" ? resource.blob : "";
      const type = resource.mimeType === undefined ? "" : ` ${resource.mimeType}`;
      return `[resource ${resource.uri}${type}, ${base64Bytes(blob)} bytes of binary data, not shown]`;
    }
    case "resource_link":
      return `[resource link ${block.name}: ${block.uri}]`;
    default:
      return `[content of type "${(block as { type: unknown }).type}" that nexo cannot show]`;
  }
}
