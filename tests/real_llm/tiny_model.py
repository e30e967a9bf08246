"""A tiny Llama-architecture GGUF whose weights are set by hand, written at test time.

llama.cpp runs a real forward pass over it, and the weights make that pass a fixed
script, so tests can run a real server offline without downloading a model:

- no marker in the prompt: ``Hello from a tiny model.`` then end of turn (finish stop);
- the token ``calc`` in the prompt: a Hermes ``<tool_call>`` calling ``add(a=2, b=3)``;
- ``calc`` and a ``<tool_response>``: ``The tool said so.`` then end of turn.

How: the residual stream holds a one-hot "state" of the current token (dims 0..39), two
flags (40, 41) and a constant 1 (dim 63). Two attention heads of layer 0 attend hard to
the marker tokens and copy a 1 into their flag; the signal sits in each head's last RoPE
pair and the RoPE base is huge, so position barely rotates it. Feed-forward blocks and
layer 1 add nothing. The output matrix maps (state, flags) to the next token with wide
margins, so sampling is deterministic in practice.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import gguf
import numpy as np
import numpy.typing as npt

EMBED, HEADS, FEED_FORWARD, LAYERS = 64, 2, 64, 2
HEAD_DIM = EMBED // HEADS
BIAS, CALC_FLAG, RESULT_FLAG = 63, 40, 41
CALC_STATE, RESULT_STATE = 38, 39
LINK = 20.0
"""Logit of the next piece of a scripted reply given the current piece."""

REPLIES: dict[str, list[str]] = {
    "plain": ["Hello", " from", " a", " tiny", " model."],
    "call": [
        "<tool_call>",
        '\n{"name": "add", ',
        '"arguments": {"a": 2, ',
        '"b": 3}}',
        "\n</tool_call>",
    ],
    "after": ["The", " tool", " said", " so."],
}
PLAIN_REPLY = "".join(REPLIES["plain"])
AFTER_TOOL_REPLY = "".join(REPLIES["after"])
CONTEXT_LENGTH = 8192

_CHAT_TEMPLATE = """\
{%- if messages[0].role == 'system' %}{% set system = messages[0].content %}\
{% else %}{% set system = 'You are a tiny test model.' %}{% endif %}
{{- '<|im_start|>system\\n' + system }}
{%- if tools %}
{{- '\\n\\n# Tools\\n<tools>' }}{% for tool in tools %}{{ '\\n' + (tool | tojson) }}{% endfor %}
{{- '\\n</tools>\\nCall a tool as <tool_call>\\n{"name": ..., "arguments": ...}\\n</tool_call>' }}
{%- endif %}
{{- '<|im_end|>\\n' }}
{%- for message in messages %}
{%- if message.role == 'system' and loop.first %}
{%- elif message.role == 'tool' %}
{{- '<|im_start|>user\\n<tool_response>\\n' + message.content }}
{{- '\\n</tool_response><|im_end|>\\n' }}
{%- elif message.role == 'assistant' and message.tool_calls %}
{{- '<|im_start|>assistant' }}{% if message.content %}{{ '\\n' + message.content }}{% endif %}
{%- for call in message.tool_calls %}{% set call = call.function or call %}
{{- '\\n<tool_call>\\n{"name": "' + call.name + '", "arguments": ' + (call.arguments | tojson) }}
{{- '}\\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\\n' }}
{%- else %}
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}
"""
"""ChatML with Hermes-style tool calls, which llama.cpp's server parses into
OpenAI ``tool_calls``."""

Matrix = npt.NDArray[np.float32]


@dataclass
class _Vocabulary:
    """SentencePiece-style ("llama") tokens: specials, the 256 byte tokens, printable
    ASCII, the two markers and every scripted piece."""

    pieces: list[str] = field(default_factory=list)
    kinds: list[int] = field(default_factory=list)

    def add(self, piece: str, kind: gguf.TokenType = gguf.TokenType.NORMAL) -> int:
        self.pieces.append(piece)
        self.kinds.append(int(kind))
        return len(self.pieces) - 1


def _zeros(*shape: int) -> Matrix:
    return np.zeros(shape, np.float32)


def write_tiny_model(path: Path) -> None:
    """Write the scripted model to ``path`` (about 100 KB)."""
    vocab = _Vocabulary()
    unknown = vocab.add("<unk>", gguf.TokenType.UNKNOWN)
    begin = vocab.add("<s>", gguf.TokenType.CONTROL)
    vocab.add("</s>", gguf.TokenType.CONTROL)
    vocab.add("<|im_start|>", gguf.TokenType.CONTROL)
    end_of_turn = vocab.add("<|im_end|>", gguf.TokenType.CONTROL)
    bytes_ = [vocab.add(f"<0x{b:02X}>", gguf.TokenType.BYTE) for b in range(256)]
    vocab.add("\u2581")
    for code in range(0x21, 0x7F):
        vocab.add(chr(code))
    calc = vocab.add("calc", gguf.TokenType.USER_DEFINED)
    result = vocab.add("<tool_response>", gguf.TokenType.USER_DEFINED)
    replies = {name: [vocab.add(piece) for piece in pieces] for name, pieces in REPLIES.items()}

    state = np.zeros(len(vocab.pieces), dtype=np.int64)
    state[bytes_[ord("\n")]] = 1  # the newline that opens the assistant's turn
    scripted = [token for tokens in replies.values() for token in tokens]
    state[scripted] = np.arange(2, 2 + len(scripted))
    assert 2 + len(scripted) <= CALC_STATE
    state[calc], state[result] = CALC_STATE, RESULT_STATE

    embedding = _zeros(len(vocab.pieces), EMBED)
    embedding[np.arange(len(vocab.pieces)), state] = 1.0
    embedding[:, BIAS] = 1.0

    output = _zeros(len(vocab.pieces), EMBED)
    for tokens in replies.values():
        for current, following in zip(tokens, [*tokens[1:], end_of_turn], strict=True):
            output[following, state[current]] = LINK
    output[replies["plain"][0], 1] = 2.0
    output[replies["call"][0], CALC_FLAG] = 4.0
    output[replies["after"][0], RESULT_FLAG] = 8.0

    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("dsh-tiny-scripted-llama")
    writer.add_context_length(CONTEXT_LENGTH)
    writer.add_embedding_length(EMBED)
    writer.add_block_count(LAYERS)
    writer.add_feed_forward_length(FEED_FORWARD)
    writer.add_head_count(HEADS)
    writer.add_head_count_kv(HEADS)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_freq_base(1e10)
    writer.add_rope_dimension_count(HEAD_DIM)
    writer.add_vocab_size(len(vocab.pieces))
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")
    writer.add_tokenizer_pre("default")
    writer.add_token_list(vocab.pieces)
    writer.add_token_scores([0.0] * len(vocab.pieces))
    writer.add_token_types(vocab.kinds)
    writer.add_bos_token_id(begin)
    writer.add_eos_token_id(end_of_turn)
    writer.add_unk_token_id(unknown)
    writer.add_pad_token_id(end_of_turn)
    writer.add_add_bos_token(False)
    writer.add_add_eos_token(False)
    writer.add_add_space_prefix(False)
    writer.add_chat_template(_CHAT_TEMPLATE)
    _add_tensors(writer, embedding, output)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _attention() -> tuple[Matrix, Matrix, Matrix, Matrix]:
    """Layer 0's query, key, value and output: head 0 flags ``calc``, head 1 flags
    ``<tool_response>``."""
    query, key, value, out = (_zeros(EMBED, EMBED) for _ in range(4))
    normalised = (EMBED / 2) ** 0.5  # an embedding's active dims after RMS norm
    for head, (marker, flag) in enumerate([(CALC_STATE, CALC_FLAG), (RESULT_STATE, RESULT_FLAG)]):
        rope_pair = head * HEAD_DIM + HEAD_DIM - 2
        query[rope_pair, BIAS] = 1.0
        key[rope_pair, marker] = 6.0
        value[head * HEAD_DIM, marker] = 1.0 / normalised
        out[flag, head * HEAD_DIM] = 1.0
    return query, key, value, out


def _add_tensors(writer: gguf.GGUFWriter, embedding: Matrix, output: Matrix) -> None:
    writer.add_tensor("token_embd.weight", embedding)
    live = _attention()
    idle = tuple(_zeros(EMBED, EMBED) for _ in range(4))
    for layer in range(LAYERS):
        prefix = f"blk.{layer}."
        query, key, value, out = live if layer == 0 else idle
        writer.add_tensor(prefix + "attn_norm.weight", np.ones(EMBED, np.float32))
        writer.add_tensor(prefix + "attn_q.weight", query)
        writer.add_tensor(prefix + "attn_k.weight", key)
        writer.add_tensor(prefix + "attn_v.weight", value)
        writer.add_tensor(prefix + "attn_output.weight", out)
        writer.add_tensor(prefix + "ffn_norm.weight", np.ones(EMBED, np.float32))
        writer.add_tensor(prefix + "ffn_gate.weight", _zeros(FEED_FORWARD, EMBED))
        writer.add_tensor(prefix + "ffn_up.weight", _zeros(FEED_FORWARD, EMBED))
        writer.add_tensor(prefix + "ffn_down.weight", _zeros(EMBED, FEED_FORWARD))
    writer.add_tensor("output_norm.weight", np.ones(EMBED, np.float32))
    writer.add_tensor("output.weight", output)


if __name__ == "__main__":
    write_tiny_model(Path(sys.argv[1]))
