/**
 * Secrets: which variables are secrets, taking them out of the process environment at start-up,
 * and the values the redactor scrubs wherever they appear.
 */
export { type CapturedEnvironment, captureSecrets } from "./capture.js";
export { clearFromInitialEnvironment, type EnvironClearing } from "./environ.js";
export { knownSecretCount, knownSecretsPattern, MIN_SECRET_LENGTH, rememberSecret } from "./known.js";
export { isSecretName, PROVIDER_KEY_NAMES, withoutSecrets } from "./names.js";
