/** Token counting with js-tiktoken's encodings, linear on any input (DESIGN.md §6). */
export { ENCODING_NAMES, encodingForModel, type EncodingName } from './encodings';
export { MAX_PIECE_CHARS } from './linear-encoder';
export {
  createTokenCounter,
  tokenCounterForModel,
  type TokenCounter,
  type TokenCounterOptions,
} from './token-counter';
