"""A pydantic model as the format: the output always validates with Model.model_validate_json.

Run: python samples/pydantic_model.py
The same model on the command line: formatenforcer generate "..." --pydantic samples.pydantic_model:Book
"""

from typing import Literal

from pydantic import BaseModel, Field


class Book(BaseModel):
    title: str = Field(max_length=40)
    author: str = Field(max_length=30)
    year: int = Field(ge=1450, le=2030)
    genre: Literal["novel", "poetry", "history", "science"]


def main() -> None:
    from transformers import LogitsProcessorList

    from formatenforcer import JsonSchemaParser
    from formatenforcer.cli.model import load
    from formatenforcer.integrations.transformers import FormatEnforcerLogitsProcessor

    model, tokenizer, _ = load(None)
    processor = FormatEnforcerLogitsProcessor(tokenizer, JsonSchemaParser(Book))  # takes the class itself
    messages = [
        {"role": "system", "content": "Answer in JSON with title, author, year and genre."},
        {"role": "user", "content": "Recommend a classic book."},
    ]
    prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    inputs = tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
    output = model.generate(**inputs, logits_processor=LogitsProcessorList([processor]), max_new_tokens=100)
    text = tokenizer.decode(output[0, inputs["input_ids"].shape[1] :], skip_special_tokens=True)
    book = Book.model_validate_json(text)
    print(repr(book))


if __name__ == "__main__":
    main()
