// examples/strict-calculator.mjs: refuses bad input before it makes a task. Send "sum 1 2 3" (or a
// data part {"numbers": [1, 2, 3]}): the answer is a task that completes at once with the sum as data.
// Anything else is refused with an A2A error, and no task is made.
import { ContentTypeNotSupportedError, InvalidParamsError, UnsupportedOperationError, dataOf, dataPart } from "a2a-grpc-server";

const ACCEPTED = ["text/plain", "application/json"];

export default {
  card: {
    name: "Strict calculator",
    description: "Adds numbers; refuses anything else.",
    skills: [{ id: "sum", name: "Sum", description: "The sum of the numbers you send.", tags: ["math"], examples: ["sum 1 2 3"] }],
  },

  async execute(ctx) {
    const numbers = [];
    for (const [i, part] of ctx.message.parts.entries()) {
      const field = `message.parts[${i}]`;
      switch (part.content.case) {
        case "text": {
          const [verb, ...rest] = part.content.value.trim().split(/\s+/);
          if (verb !== "sum") throw new UnsupportedOperationError(`this agent only sums; start the text with "sum", not ${JSON.stringify(verb.slice(0, 20))}`);
          for (const word of rest) {
            const n = Number(word);
            if (word === "" || !Number.isFinite(n))
              throw new InvalidParamsError(`${JSON.stringify(word.slice(0, 20))} is not a number`, { field: `${field}.text` });
            numbers.push(n);
          }
          break;
        }
        case "data": {
          const data = dataOf(part);
          const list = data !== null && typeof data === "object" && !Array.isArray(data) ? data.numbers : undefined;
          if (!Array.isArray(list) || !list.every((n) => typeof n === "number")) {
            throw new InvalidParamsError('a data part must be {"numbers": [ ...numbers ]}', { field: `${field}.data` });
          }
          numbers.push(...list);
          break;
        }
        default:
          throw new ContentTypeNotSupportedError(part.mediaType || "a file", `${field}.${part.content.case}`, ACCEPTED);
      }
    }
    if (numbers.length === 0) throw new InvalidParamsError('send at least one number, e.g. "sum 1 2 3"', { field: "message.parts" });
    const sum = numbers.reduce((a, b) => a + b, 0);
    // The first update completes the task: SUBMITTED -> COMPLETED (ruling A-26).
    await ctx.complete([`${numbers.join(" + ")} = ${sum}`, dataPart({ numbers, sum })]);
  },
};
