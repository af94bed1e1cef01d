module.exports = require("./private-tmpdir").setUp;
