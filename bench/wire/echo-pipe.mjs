// The bare exchange: bytes back as they come, no framing, no JSON. At one call in flight it is two
// process wake-ups a round trip and nothing else, which every contender pays besides its own work.
process.stdin.on("data", (chunk) => process.stdout.write(chunk));
