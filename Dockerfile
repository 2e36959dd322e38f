# The API image: builds the TypeScript and serves GraphQL. Used by docker-compose.yml with a
# pgvector/pgvector server; without DATABASE_URL it runs on embedded PGlite in /data.
FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY prisma ./prisma
COPY prisma.config.ts ./
# npm 10 (this image's) runs dependency install scripts: onnxruntime-node's would fetch its unused
# CUDA provider from NuGet. npm 11's allowScripts (package.json) denies them without this.
RUN ONNXRUNTIME_NODE_INSTALL=skip npm ci
COPY . .
RUN npm run build && npm prune --omit=dev
ENV NODE_ENV=production HOST=0.0.0.0 PORT=4000 DATA_DIR=/data
EXPOSE 4000
CMD ["node", "bin/dhr.js", "serve", "--demo"]
